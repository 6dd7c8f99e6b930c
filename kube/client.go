package kube

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
)

// Client sends requests to one API server as one user. It is safe for
// concurrent use.
type Client struct {
	server    *url.URL
	http      *http.Client
	token     string
	tokenFile string
	exec      *execToken
}

// New returns a client for cfg.
func New(cfg *Config) (*Client, error) {
	server, err := url.Parse(cfg.Server)
	if err != nil {
		return nil, fmt.Errorf("parse the API server's URL: %w", err)
	}
	if server.Scheme != "https" && server.Scheme != "http" || server.Host == "" {
		return nil, fmt.Errorf("the API server's URL %q is not an http(s)://HOST URL", cfg.Server)
	}
	tlsConfig := &tls.Config{InsecureSkipVerify: cfg.Insecure, ServerName: cfg.ServerName}
	if len(cfg.CAData) > 0 {
		tlsConfig.RootCAs = x509.NewCertPool()
		if !tlsConfig.RootCAs.AppendCertsFromPEM(cfg.CAData) {
			return nil, errors.New("the API server's CA data holds no PEM certificate")
		}
	}
	if len(cfg.CertData) > 0 || len(cfg.KeyData) > 0 {
		cert, err := tls.X509KeyPair(cfg.CertData, cfg.KeyData)
		if err != nil {
			return nil, fmt.Errorf("load the client certificate: %w", err)
		}
		tlsConfig.Certificates = []tls.Certificate{cert}
	}
	transport := http.DefaultTransport.(*http.Transport).Clone()
	transport.TLSClientConfig = tlsConfig
	c := &Client{
		server:    server,
		http:      &http.Client{Transport: transport},
		token:     cfg.Token,
		tokenFile: cfg.TokenFile,
	}
	if cfg.Exec != nil {
		c.exec = &execToken{config: *cfg.Exec}
	}
	return c, nil
}

// StatusError is an error answer of the API server.
type StatusError struct {
	// Code is the HTTP status code.
	Code int
	// Reason is the Status's machine-readable reason, such as NotFound or
	// Forbidden; empty if the answer was no Status.
	Reason string
	// Message is the Status's message, or the answer's text if it was no
	// Status.
	Message string
}

func (e *StatusError) Error() string {
	if e.Reason != "" {
		return fmt.Sprintf("%s (%d %s)", e.Message, e.Code, e.Reason)
	}
	return fmt.Sprintf("%s (%d %s)", e.Message, e.Code, http.StatusText(e.Code))
}

// maxErrorBody bounds how much of an error answer is read.
const maxErrorBody = 64 << 10

// ResponseError returns the error that resp, an answer other than 2xx,
// stands for, reading and closing its body: a *StatusError with the
// Kubernetes Status's message, or the body's text if it is no Status.
func ResponseError(resp *http.Response) error {
	defer resp.Body.Close()
	data, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	var st status
	if json.Unmarshal(data, &st) == nil && st.Kind == "Status" && st.Message != "" {
		return &StatusError{Code: resp.StatusCode, Reason: st.Reason, Message: st.Message}
	}
	message := strings.TrimSpace(string(data))
	if message == "" {
		message = "no message"
	}
	return &StatusError{Code: resp.StatusCode, Message: message}
}

// request builds a request for path (with query) on the API server,
// with the client's credentials.
func (c *Client) request(ctx context.Context, method, path string, query url.Values, body io.Reader) (*http.Request, error) {
	u := *c.server
	u.Path = strings.TrimSuffix(u.Path, "/") + path
	u.RawQuery = query.Encode()
	req, err := http.NewRequestWithContext(ctx, method, u.String(), body)
	if err != nil {
		return nil, err
	}
	token := c.token
	switch {
	case c.tokenFile != "":
		data, err := os.ReadFile(c.tokenFile)
		if err != nil {
			return nil, fmt.Errorf("read the token: %w", err)
		}
		token = strings.TrimSpace(string(data))
	case c.exec != nil:
		if token, err = c.exec.get(ctx); err != nil {
			return nil, err
		}
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	return req, nil
}

// do sends in, as JSON unless nil, to path and decodes the 2xx answer
// into out.
func (c *Client) do(ctx context.Context, method, path string, query url.Values, in, out any) error {
	var body io.Reader
	if in != nil {
		data, err := json.Marshal(in)
		if err != nil {
			return err
		}
		body = bytes.NewReader(data)
	}
	req, err := c.request(ctx, method, path, query, body)
	if err != nil {
		return err
	}
	req.Header.Set("Accept", "application/json")
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return err
	}
	if resp.StatusCode/100 != 2 {
		return ResponseError(resp)
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		return fmt.Errorf("decode the answer: %w", err)
	}
	return nil
}
