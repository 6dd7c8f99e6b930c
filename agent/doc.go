// Package agent holds the parts of gtrace agent, the node agent that a
// DaemonSet runs on each node of a Kubernetes cluster to run scripts
// for the cluster's users.
//
// Server is its HTTP API: POST /v1/run runs a script (RunRequest) with
// a Runner, which cmd/gtrace provides, and streams the answer as lines
// of JSON (Message): the lines the script prints, gtrace's messages,
// then each map at the end in mapmerge's wire format, and the exit
// code. POST /v1/stop ends a run of the same user as exit() would, so
// that its maps still come; a run also ends at its deadline or when its
// caller leaves. /readyz and /metrics need no token. One script runs at
// a time.
//
// Authorizer guards the agent's HTTP API. A caller authenticates with a
// Kubernetes bearer token, which the agent checks with a TokenReview;
// then a SubjectAccessReview asks whether that user holds gtrace's
// right on this node: verb VerbTrace on resource "nodes" of the API
// group "gtrace.io", named by the node. Scripts that call unsafe
// builtins need VerbTraceUnsafe as well. No such resource exists in the
// API server: RBAC grants rights on any group and resource, and
// gtrace's rights are checked only by the agent. deploy/ has
// ClusterRoles that grant them: gtrace-user the first, and
// gtrace-unsafe-user both.
//
// Every request is reviewed anew: the agent runs few requests, each a
// script, and a revoked right or token takes effect at once.
package agent
