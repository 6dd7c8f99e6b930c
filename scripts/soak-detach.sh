#!/usr/bin/env bash
# Soak test of stopping gtrace: TestDetachLeavesNothing with RUNS runs of
# each stopping pattern (a second SIGINT; SIGINT then SIGKILL), checking
# after each that the traced program has no breakpoint and its USDT
# semaphore is down. Needs root, gcc and <sys/sdt.h>. Each run waits for
# the kernel to detach 61 uprobes, several seconds.
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-100}
GTRACE_DETACH_RUNS=$runs go test ./tests/reliability -run '^TestDetachLeavesNothing$' -count=1 -v -timeout 0
