package kube

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
)

// ListOptions select the objects a list returns; empty selects all.
type ListOptions struct {
	// LabelSelector is a label selector, such as app=gtrace-agent.
	LabelSelector string
	// FieldSelector is a field selector, such as spec.nodeName=node-1.
	FieldSelector string
}

func (o ListOptions) query() url.Values {
	q := url.Values{}
	if o.LabelSelector != "" {
		q.Set("labelSelector", o.LabelSelector)
	}
	if o.FieldSelector != "" {
		q.Set("fieldSelector", o.FieldSelector)
	}
	return q
}

// GetNode returns the node name.
func (c *Client) GetNode(ctx context.Context, name string) (*Node, error) {
	var node Node
	if err := c.do(ctx, http.MethodGet, "/api/v1/nodes/"+url.PathEscape(name), nil, nil, &node); err != nil {
		return nil, fmt.Errorf("get node %s: %w", name, err)
	}
	return &node, nil
}

// ListNodes returns the nodes that opts select.
func (c *Client) ListNodes(ctx context.Context, opts ListOptions) (*NodeList, error) {
	var nodes NodeList
	if err := c.do(ctx, http.MethodGet, "/api/v1/nodes", opts.query(), nil, &nodes); err != nil {
		return nil, fmt.Errorf("list nodes: %w", err)
	}
	return &nodes, nil
}

// GetPod returns the pod namespace/name.
func (c *Client) GetPod(ctx context.Context, namespace, name string) (*Pod, error) {
	var pod Pod
	path := "/api/v1/namespaces/" + url.PathEscape(namespace) + "/pods/" + url.PathEscape(name)
	if err := c.do(ctx, http.MethodGet, path, nil, nil, &pod); err != nil {
		return nil, fmt.Errorf("get pod %s/%s: %w", namespace, name, err)
	}
	return &pod, nil
}

// ListPods returns the pods in namespace, or in all namespaces if
// namespace is "", that opts select.
func (c *Client) ListPods(ctx context.Context, namespace string, opts ListOptions) (*PodList, error) {
	path, where := "/api/v1/pods", "all namespaces"
	if namespace != "" {
		path, where = "/api/v1/namespaces/"+url.PathEscape(namespace)+"/pods", "namespace "+namespace
	}
	var pods PodList
	if err := c.do(ctx, http.MethodGet, path, opts.query(), nil, &pods); err != nil {
		return nil, fmt.Errorf("list pods in %s: %w", where, err)
	}
	return &pods, nil
}
