package kube

import (
	"context"
	"fmt"
	"net/http"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
)

// ReviewToken asks the API server who token authenticates, for
// audiences (none: the API server's own). A token the server does not
// accept is no error: the status says Authenticated false, and why.
func (c *Client) ReviewToken(ctx context.Context, token string, audiences []string) (*authenticationv1.TokenReviewStatus, error) {
	in := &authenticationv1.TokenReview{
		Spec: authenticationv1.TokenReviewSpec{Token: token, Audiences: audiences},
	}
	in.APIVersion, in.Kind = "authentication.k8s.io/v1", "TokenReview"
	var out authenticationv1.TokenReview
	if err := c.do(ctx, http.MethodPost, "/apis/authentication.k8s.io/v1/tokenreviews", nil, in, &out); err != nil {
		return nil, fmt.Errorf("review a token: %w", err)
	}
	return &out.Status, nil
}

// ReviewAccess asks the API server whether the user of spec may do what
// it describes. A denial is no error: the status says Allowed false.
func (c *Client) ReviewAccess(ctx context.Context, spec authorizationv1.SubjectAccessReviewSpec) (*authorizationv1.SubjectAccessReviewStatus, error) {
	in := &authorizationv1.SubjectAccessReview{Spec: spec}
	in.APIVersion, in.Kind = "authorization.k8s.io/v1", "SubjectAccessReview"
	var out authorizationv1.SubjectAccessReview
	if err := c.do(ctx, http.MethodPost, "/apis/authorization.k8s.io/v1/subjectaccessreviews", nil, in, &out); err != nil {
		return nil, fmt.Errorf("review the access of user %q: %w", spec.User, err)
	}
	return &out.Status, nil
}
