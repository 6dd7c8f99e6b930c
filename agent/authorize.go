package agent

import (
	"context"
	"fmt"
	"net/http"
	"strings"

	"gtrace/kube"
)

// The right to run scripts on a node, as a SubjectAccessReview asks for
// it: verb VerbTrace, or VerbTraceUnsafe for scripts with unsafe
// builtins, on resource Resource of API group Group, named by the node.
const (
	Group           = "gtrace.io"
	Resource        = "nodes"
	VerbTrace       = "trace"
	VerbTraceUnsafe = "trace-unsafe"
)

// TokenHeader carries the caller's bearer token ("Bearer TOKEN") when the
// request comes through the API server's pod proxy, which drops the
// Authorization header once it has authenticated the caller itself.
const TokenHeader = "X-Gtrace-Authorization"

// Authorizer checks that the callers of the agent's API hold gtrace's
// right on Node, asking the API server through Kube.
type Authorizer struct {
	Kube *kube.Client
	Node string
}

type userKey struct{}

// UserOf returns the user that Handler authenticated for the request
// with context ctx.
func UserOf(ctx context.Context) (kube.UserInfo, bool) {
	user, ok := ctx.Value(userKey{}).(kube.UserInfo)
	return user, ok
}

// Handler returns a handler that serves a request with next only if its
// bearer token is valid (else 401) and its user holds VerbTrace on the
// node (else 403). The user is in the request's context, for UserOf and
// AllowUnsafe.
func (a *Authorizer) Handler(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		token, ok := bearerToken(r)
		if !ok {
			refuse(w, http.StatusUnauthorized, "no bearer token: send a Kubernetes token in the Authorization header, or in "+TokenHeader+" through the API server's pod proxy")
			return
		}
		status, err := a.Kube.ReviewToken(r.Context(), token, nil)
		if err != nil {
			refuse(w, http.StatusServiceUnavailable, "cannot check the token: "+err.Error())
			return
		}
		if !status.Authenticated {
			why := status.Error
			if why == "" {
				why = "the API server does not accept it"
			}
			refuse(w, http.StatusUnauthorized, "invalid token: "+why)
			return
		}
		ctx := context.WithValue(r.Context(), userKey{}, status.User)
		if !a.allow(ctx, w, status.User, VerbTrace) {
			return
		}
		next.ServeHTTP(w, r.WithContext(ctx))
	})
}

// AllowUnsafe reports whether the user of r, which Handler has let
// through, holds VerbTraceUnsafe on the node; if not, it has answered
// 403 (or 503 if the API server could not say).
func (a *Authorizer) AllowUnsafe(w http.ResponseWriter, r *http.Request) bool {
	user, ok := UserOf(r.Context())
	if !ok {
		refuse(w, http.StatusInternalServerError, "the request was not authenticated")
		return false
	}
	return a.allow(r.Context(), w, user, VerbTraceUnsafe)
}

// allow asks the API server whether user holds verb on the node, and
// answers 403 if not.
func (a *Authorizer) allow(ctx context.Context, w http.ResponseWriter, user kube.UserInfo, verb string) bool {
	spec := kube.AccessReviewSpec{
		ResourceAttributes: &kube.ResourceAttributes{
			Group:    Group,
			Resource: Resource,
			Verb:     verb,
			Name:     a.Node,
		},
		User:   user.Username,
		UID:    user.UID,
		Groups: user.Groups,
		Extra:  user.Extra,
	}
	status, err := a.Kube.ReviewAccess(ctx, spec)
	if err != nil {
		refuse(w, http.StatusServiceUnavailable, "cannot check the user's rights: "+err.Error())
		return false
	}
	if !status.Allowed {
		msg := fmt.Sprintf("user %q may not %s on node %q: that needs the verb %q on the resource %q of the API group %q",
			user.Username, verb, a.Node, verb, Resource, Group)
		if status.Reason != "" {
			msg += " (" + status.Reason + ")"
		}
		refuse(w, http.StatusForbidden, msg)
		return false
	}
	return true
}

// bearerToken returns the token of the request's Authorization header,
// or else of its TokenHeader.
func bearerToken(r *http.Request) (string, bool) {
	for _, name := range []string{"Authorization", TokenHeader} {
		scheme, token, ok := strings.Cut(r.Header.Get(name), " ")
		if ok && strings.EqualFold(scheme, "Bearer") && strings.TrimSpace(token) != "" {
			return strings.TrimSpace(token), true
		}
	}
	return "", false
}

func refuse(w http.ResponseWriter, code int, msg string) {
	if code == http.StatusUnauthorized {
		w.Header().Set("WWW-Authenticate", `Bearer realm="gtrace agent"`)
	}
	http.Error(w, "gtrace agent: "+msg, code)
}
