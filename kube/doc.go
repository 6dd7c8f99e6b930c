// Package kube is gtrace's own small Kubernetes client: plain net/http
// and JSON, and only what gtrace's node agent and its kubectl plugin
// need: reading nodes and pods, reviewing tokens and access rights, and
// HTTP requests to a pod through the API server's proxy, streamed.
//
// A Config comes from a kubeconfig file (LoadKubeconfig, with the
// current or a named context; a token, a client certificate or an exec
// credential plugin) or from the service account that a pod runs as
// (InClusterConfig); New makes a Client of it.
//
// The objects (types.go) are gtrace's own JSON mirrors of the API's,
// with the fields gtrace reads. Neither client-go nor k8s.io/api is
// used: each gtrace run would pay for them, in binary size and memory
// (docs/performance.md has the figures).
//
// Every error names what was asked. An error answer of the API server
// is a *StatusError, with the HTTP status, the reason and the message
// of the Kubernetes Status in its body.
package kube
