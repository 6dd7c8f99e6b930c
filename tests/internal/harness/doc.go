// Package harness holds what the test packages under tests/ share: the
// gtrace binary, built once per test binary by Main; running it, or
// another tracer, with a timeout; starting a process and waiting for a
// line of its output; building C test programs; reading what the
// tracers print; and the sections that the VM tests' guest scripts
// print.
//
// The packages split the tests by kind, so that each runs well within go
// test's timeout and one kind can be run alone:
//
//	tests/e2e          the language, output, errors and CLI, and differential tests against bpftrace
//	tests/reliability  stopping, killing, detaching, lost events, missing probes
//	tests/tools        Debian's bpftrace tools, uprobe tools, USDT and stacks
//	tests/vm           tests in qemu under Debian's kernels (internal/vmtest)
//
// The packages that run the gtrace binary call Main from their TestMain.
// Tests run in their package's directory, so the shared test data is
// ../testdata.
package harness
