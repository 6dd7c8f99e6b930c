// Package gobuild holds what the builds of the commands the tests run
// but gtrace's go.mod never requires (kube-apiserver, Prometheus) share:
// a lock on their cache directory, so that concurrent test binaries
// build once, and the rule for building them from a test: only with
// enough of its timeout left, skipping (failing under CI=true) and
// naming the command that builds them ahead otherwise.
package gobuild
