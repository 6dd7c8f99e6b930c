// Package kubeprom builds, for the tests, a Prometheus that discovers
// its targets through a Kubernetes API server (kubernetes_sd_configs):
// Debian's prometheus package is built without that discovery. Build
// compiles github.com/prometheus/prometheus/cmd/prometheus at Version
// with the Kubernetes discovery alone (the build tags remove_all_sd and
// enable_kubernetes_sd leave out the cloud providers' SDKs) into the
// user's cache directory; Binary finds it there, or builds it if the
// test has the time. The build took 6m46s on a 2-core machine, with
// the modules downloaded; from the go command's build cache it links in
// seconds. CI builds it ahead of the tests:
//
//	go run ./internal/kubeprom/build
package kubeprom
