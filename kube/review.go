package kube

import (
	"context"
	"fmt"
	"net/http"
)

// ReviewToken asks the API server who token authenticates, for
// audiences (none: the API server's own). A token the server does not
// accept is no error: the status says Authenticated false, and why.
func (c *Client) ReviewToken(ctx context.Context, token string, audiences []string) (*TokenReviewStatus, error) {
	type spec struct {
		Token     string   `json:"token"`
		Audiences []string `json:"audiences,omitempty"`
	}
	in := struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
		Spec       spec   `json:"spec"`
	}{"authentication.k8s.io/v1", "TokenReview", spec{token, audiences}}
	var out struct {
		Status TokenReviewStatus `json:"status"`
	}
	if err := c.do(ctx, http.MethodPost, "/apis/authentication.k8s.io/v1/tokenreviews", nil, in, &out); err != nil {
		return nil, fmt.Errorf("review a token: %w", err)
	}
	return &out.Status, nil
}

// ReviewAccess asks the API server whether the user of spec may do what
// it describes. A denial is no error: the status says Allowed false.
func (c *Client) ReviewAccess(ctx context.Context, spec AccessReviewSpec) (*AccessReviewStatus, error) {
	in := struct {
		APIVersion string           `json:"apiVersion"`
		Kind       string           `json:"kind"`
		Spec       AccessReviewSpec `json:"spec"`
	}{"authorization.k8s.io/v1", "SubjectAccessReview", spec}
	var out struct {
		Status AccessReviewStatus `json:"status"`
	}
	if err := c.do(ctx, http.MethodPost, "/apis/authorization.k8s.io/v1/subjectaccessreviews", nil, in, &out); err != nil {
		return nil, fmt.Errorf("review the access of user %q: %w", spec.User, err)
	}
	return &out.Status, nil
}
