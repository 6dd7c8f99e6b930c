package kube

import (
	"context"
	"errors"
	"strings"
)

// BearerToken returns the token the client sends, read anew from its
// file or its exec plugin as a request would. A client that
// authenticates otherwise, by a certificate, has none.
func (c *Client) BearerToken(ctx context.Context) (string, error) {
	req, err := c.request(ctx, "GET", "/", nil, nil)
	if err != nil {
		return "", err
	}
	token, ok := strings.CutPrefix(req.Header.Get("Authorization"), "Bearer ")
	if !ok {
		return "", errors.New("the kubeconfig gives no bearer token")
	}
	return token, nil
}
