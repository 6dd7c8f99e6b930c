package vm

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"gtrace/internal/vmtest"
)

// vmModuleScript traces the dummy network driver, loaded as a module
// (vmtest.Config.Modules). /tmp/add PREFIX adds 3 dummy devices: each
// "ip link add" calls dummy_setup once. The wildcard's child also
// prints the types of gtrace's BPF links, while they are attached: its
// parent is gtrace.
const vmModuleScript = `
cat >/tmp/add <<'SH'
for i in 1 2 3; do ip link add $1$i type dummy || exit 1; done
SH
cat >/tmp/add-links <<'SH'
grep -h '^link_type:' /proc/$PPID/fdinfo/* | sort | uniq -c
sh /tmp/add w
SH
` + vmShellFuncs + `
section list /gtrace -l 'kprobe:dummy:*'
section funcs sh -c "grep '\[dummy\]' /sys/kernel/tracing/available_filter_functions | sort -u"
section single /gtrace -e 'kprobe:dummy:dummy_setup { @[probe, func] = count(); }' -c 'sh /tmp/add s'
section wildcard /gtrace -e 'kprobe:dummy:* { @[probe, func] = count(); }' -c 'sh /tmp/add-links'
`

// TestVMKprobeModule runs kprobe:MODULE:FUNCTION on a loaded module.
func TestVMKprobeModule(t *testing.T) {
	gtrace := vmtest.BuildGtrace(t)
	for _, k := range vmtest.Kernels {
		t.Run(k.Name, func(t *testing.T) {
			res := vmtest.Run(t, vmtest.Config{
				Kernel:  k,
				Files:   map[string]string{"/gtrace": gtrace},
				Modules: []string{"dummy"},
				Timeout: 3 * time.Minute,
			}, "sh", "-c", vmModuleScript)
			if res.ExitCode != 0 {
				t.Fatalf("guest script exited %d\nstdout:\n%s\nstderr:\n%s", res.ExitCode, res.Stdout, res.Stderr)
			}
			sections, err := parseVMSections(res.Stdout)
			if err != nil {
				t.Fatal(err)
			}
			var want []string
			for _, line := range strings.Split(strings.TrimSpace(sections["funcs"].stdout), "\n") {
				if fn, ok := strings.CutSuffix(line, " [dummy]"); ok {
					want = append(want, "kprobe:dummy:"+fn)
				}
			}
			if !slices.Contains(want, "kprobe:dummy:dummy_setup") {
				t.Fatalf("dummy_setup is not among the module's traceable functions: %q", sections["funcs"].stdout)
			}

			if s := sections["list"]; s.status != 0 || strings.TrimSpace(s.stdout) != strings.Join(want, "\n") {
				t.Errorf("list: status %d, got\n%s\nwant\n%s\nstderr: %s", s.status, s.stdout, strings.Join(want, "\n"), s.stderr)
			}
			const count = "@[kprobe:dummy:dummy_setup, dummy_setup]: 3\n"
			if s := sections["single"]; s.status != 0 || vmAttaching(s.stderr) != 1 || !strings.Contains(s.stdout, count) {
				t.Errorf("single: status %d, want %q in stdout:\n%s\nstderr: %s", s.status, count, s.stdout, s.stderr)
			}
			// 6.12 has kprobe.multi: one link for every function. 6.1
			// attaches a kprobe, a perf link, per function.
			links := fmt.Sprintf("%7d link_type:\tperf\n", len(want))
			if k == vmtest.Debian612 {
				links = "      1 link_type:\tkprobe_multi\n"
			}
			if s := sections["wildcard"]; s.status != 0 || vmAttaching(s.stderr) != len(want) ||
				!strings.Contains(s.stdout, links) || !strings.Contains(s.stdout, count) {
				t.Errorf("wildcard: status %d, want %d probes attached, %q and %q in stdout:\n%s\nstderr: %s",
					s.status, len(want), links, count, s.stdout, s.stderr)
			}
		})
	}
}
