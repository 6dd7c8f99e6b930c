// Package kube is gtrace's own small Kubernetes client: plain net/http
// and JSON, with the object types of k8s.io/api, and only what gtrace's
// node agent and its kubectl plugin need: reading nodes and pods,
// reviewing tokens and access rights, and HTTP requests to a pod
// through the API server's proxy, streamed.
//
// A Config comes from a kubeconfig file (LoadKubeconfig, with the
// current or a named context) or from the service account that a pod
// runs as (InClusterConfig); New makes a Client of it. Client-go is not
// used: it would add several megabytes to gtrace's binary and its
// package initialization to every run of gtrace.
//
// Every error names what was asked. An error answer of the API server
// is a *StatusError, with the HTTP status, the reason and the message
// of the Kubernetes Status in its body.
package kube
