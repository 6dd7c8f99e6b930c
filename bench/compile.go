package bench

import (
	"fmt"
	"strings"

	"gtrace/codegen"
	"gtrace/compiler"
	"gtrace/internal/fakekernel"
	"gtrace/sema"
)

// OneLiners are typical one-liners, in the dialect both bpftrace 0.17 and
// gtrace accept, by a short name.
var OneLiners = []struct{ Name, Src string }{
	{"count", `tracepoint:syscalls:sys_enter_read { @ = count(); }`},
	{"count_by_comm", `tracepoint:raw_syscalls:sys_enter { @[comm] = count(); }`},
	{"hist", `tracepoint:syscalls:sys_enter_read { @bytes = hist(args->count); }`},
	{"latency", latencyScript},
	{"printf", `tracepoint:syscalls:sys_enter_openat { printf("%s %s\n", comm, str(args->filename)); }`},
	{"interval", `tracepoint:syscalls:sys_enter_read /pid > 1/ { @[pid, comm] = sum(args->count); }
interval:s:1 { print(@); clear(@); }`},
}

// block is one probe of GenerateProgram's scripts, numbered by %[1]d:
// a predicate, variables, aggregations keyed by builtins, a branch and a
// printf, with maps of its own, as a long hand-written script has.
const block = `tracepoint:syscalls:sys_enter_read /pid != %[1]d && args->fd > 2/ {
	$n = args->count + %[1]d;
	@bytes%[1]d[comm] = sum($n);
	@size%[1]d = hist($n);
	if ($n > %[1]d * 4096) {
		printf("%%s read %%d bytes from fd %%d\n", comm, $n, args->fd);
	} else {
		@small%[1]d[pid, tid] = count();
	}
	@last%[1]d = ($n %% 7 == 0) ? elapsed : nsecs - @start;
}

`

// GenerateProgram returns a script of at most lines lines, and close to
// it: a BEGIN probe, as many blocks as fit, and an interval probe that
// exits. Its probes all attach to syscalls:sys_enter_read, so that the
// script also runs, or compiles, on a real kernel.
func GenerateProgram(lines int) string {
	var b strings.Builder
	b.WriteString("BEGIN { printf(\"Tracing...\\n\"); @start = nsecs; }\n\n")
	perBlock := strings.Count(block, "\n")
	for i := 0; 3+(i+1)*perBlock <= lines; i++ {
		fmt.Fprintf(&b, block, i)
	}
	b.WriteString("interval:s:1 { exit(); }\n")
	return b.String()
}

// Compile lexes, parses, checks and compiles src as gtrace does, but
// with the fake kernel of internal/fakekernel for what the kernel would
// tell: every tracepoint has the fields of syscalls:sys_enter_read, or
// of sys_exit_read, and attach points are taken as written. It needs no
// root.
func Compile(src []byte) (*codegen.Output, error) {
	prog, err := compiler.Compile(src, &compiler.Options{Name: "bench.bt",
		Check: sema.Options{Expand: fakekernel.Expand, Format: fakekernel.Format,
			KernelType: fakekernel.KernelType},
		Codegen: codegen.Options{NumCPU: 2}})
	if err != nil {
		return nil, err
	}
	return prog.Output, nil
}
