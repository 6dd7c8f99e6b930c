// Package testutils holds the skip rules shared by tests that need the
// kernel: they skip with a reason when run without root, but under CI
// (CI=true), where root is available, a skip is a failure, so nothing goes
// silently untested. Opt-in tests, such as measurements, are an
// exception: they skip unless asked for, under CI too; and so is what the
// kernel has just been seen to refuse (SkipUnsupported).
//
// It also holds, one file per concern, what several packages' tests set
// up and remove when they end: cgroups (cgroup.go), a network namespace
// joined by a veth pair (netns.go) and processes (process.go). It
// imports no net package: internal/vmtest runs the test binaries of its
// users in guests, which a test binary linked dynamically cannot be
// (the net package links it so); internal/testnet has what needs net.
package testutils

import (
	"os"
	"testing"
)

// RequireRoot skips or, under CI, fails tb unless it runs as root.
func RequireRoot(tb testing.TB) {
	tb.Helper()
	if os.Geteuid() != 0 {
		Skip(tb, "needs root")
	}
}

// Skip skips tb with reason, or fails it under CI=true.
func Skip(tb testing.TB, reason string) {
	tb.Helper()
	if os.Getenv("CI") == "true" {
		tb.Fatalf("cannot run under CI: %s", reason)
	}
	tb.Skip(reason)
}

// SkipUnsupported skips tb, under CI too, for a reason the test has just
// seen: the kernel refused what the test needs, as a tool's load failing
// with the kernel's error while the kernel lacks the feature. It is for
// what this machine cannot run at all, never for a missing package or
// privilege, which Skip's failure under CI must catch.
func SkipUnsupported(tb testing.TB, reason string) {
	tb.Helper()
	tb.Skip("this kernel cannot run it: " + reason)
}

// OptIn skips tb, under CI too, unless the environment variable env is
// "1": tb is what (a measurement, say), which CI does not run.
func OptIn(tb testing.TB, env, what string) {
	tb.Helper()
	if os.Getenv(env) != "1" {
		tb.Skipf("opt-in: %s; set %s=1 to run it", what, env)
	}
}
