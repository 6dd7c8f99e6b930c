// Package kubeapi runs a real Kubernetes API server for tests: Debian's
// etcd and a kube-apiserver on loopback, with a token file for the
// tests' own users, RBAC, and a service-account signing key pair, so
// that TokenRequest, TokenReview and SubjectAccessReview work as in a
// cluster. There is no controller manager, scheduler or kubelet: tests
// create the namespaces and service accounts they need themselves.
//
// kube-apiserver and kubectl come from the module k8s.io/kubernetes at
// Version, which gtrace's own go.mod never requires: Build writes a
// temporary module that requires it, builds both commands with the go
// command, and caches them in CacheDir. Kubernetes' go.mod replaces its
// staging modules (k8s.io/api, k8s.io/client-go, ...) by directories,
// which a dependency's replacements cannot do; the temporary module
// replaces each by the published module of the matching v0 version. CI
// builds the binaries before go test, outside the per-package timeout:
//
//	go run ./internal/kubeapi/build
//
// Start builds them itself when they are missing and the test has at
// least BuildBudget left; otherwise it skips (fails under CI=true) and
// names that command.
package kubeapi
