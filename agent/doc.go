// Package agent holds the parts of gtrace agent, the node agent that a
// DaemonSet runs on each node of a Kubernetes cluster to run scripts
// for the cluster's users.
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
