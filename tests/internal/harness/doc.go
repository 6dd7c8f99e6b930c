// Package harness holds what the test packages under tests/ share: the
// gtrace binary, built once per test binary by Main; running it, or
// another tracer, with a timeout; starting a process and waiting for a
// line of its output; building C test programs; and reading what the
// tracers print.
//
// The packages split the tests by kind, so that one kind can be run
// alone, in a fraction of the time of the whole:
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
