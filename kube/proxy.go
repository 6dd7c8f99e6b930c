package kube

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
)

// PodPort is a port of a pod, reached through the API server.
type PodPort struct {
	Namespace string
	Name      string
	Port      int
	// HTTPS makes the API server speak TLS to the pod; it does not check
	// the pod's certificate.
	HTTPS bool
}

func (p PodPort) String() string {
	return fmt.Sprintf("%s/%s:%d", p.Namespace, p.Name, p.Port)
}

// Proxy sends a request to pod through the API server's pod proxy
// (/api/v1/namespaces/NS/pods/NAME:PORT/proxy/PATH), and returns the
// answer as it comes, its body unread, to be streamed and closed by the
// caller. The user needs the right to create (for GET, get) the
// subresource pods/proxy. An answer of any status is returned: one
// other than 2xx may come from the pod or from the API server (a
// missing pod, a refused proxy), and ResponseError reads either.
//
// The API server does not pass the request's Authorization header on to
// the pod: a credential for the pod goes in another header.
func (c *Client) Proxy(ctx context.Context, pod PodPort, method, path string, query url.Values, header http.Header, body io.Reader) (*http.Response, error) {
	if !strings.HasPrefix(path, "/") {
		path = "/" + path
	}
	target := pod.Name + ":" + strconv.Itoa(pod.Port)
	if pod.HTTPS {
		target = "https:" + target
	}
	full := "/api/v1/namespaces/" + url.PathEscape(pod.Namespace) + "/pods/" + url.PathEscape(target) + "/proxy" + path
	req, err := c.request(ctx, method, full, query, body)
	if err != nil {
		return nil, fmt.Errorf("%s %s on pod %s: %w", method, path, pod, err)
	}
	for name, values := range header {
		if http.CanonicalHeaderKey(name) != "Authorization" {
			req.Header[name] = values
		}
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, fmt.Errorf("%s %s on pod %s: %w", method, path, pod, err)
	}
	return resp, nil
}
