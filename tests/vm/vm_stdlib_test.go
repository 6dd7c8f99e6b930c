package vm

import (
	"strings"
	"testing"
	"time"

	"gtrace/internal/vmtest"
)

// vmStdlibScript runs the standard library's helpers that need fentry
// or kprobes: path() of the file dd opens, whole and cut to its last
// 11 bytes; override() of getuid's result, which needs a kernel built
// with CONFIG_BPF_KPROBE_OVERRIDE; is_err() of the ERR_PTR do_filp_open
// returns for a file that does not exist.
const vmStdlibScript = vmShellFuncs + `
echo x > /tmp/gtrace-path-test
section path /gtrace -e 'fentry:security_file_open /comm == "dd"/ {
	$p = path(args.file->f_path);
	if (strncmp($p, "/tmp/gtrace-path-test", 22) == 0) {
		printf("%s|%s|%d\n", $p, path(&args.file->f_path, 12), sizeof(path(args.file->f_path, 12)));
	}
}' -c "dd if=/tmp/gtrace-path-test of=/dev/null"
section path-kprobe /gtrace -e 'kprobe:security_file_open { path(arg0); }'
section override /gtrace --unsafe -e 'kprobe:__x64_sys_getuid /comm == "id"/ { override(4194304); }' -c "id -u"
section is_err /gtrace -e 'fexit:do_filp_open /comm == "cat"/ { if (is_err(retval)) { printf("is_err: %d\n", (int64)retval); } }' \
	-c "cat /tmp/gtrace-no-such-file"
`

// TestVMStdlib checks path, override and is_err against the kernels.
func TestVMStdlib(t *testing.T) {
	files := map[string]string{"/gtrace": vmtest.BuildGtrace(t)}
	for _, k := range vmtest.Kernels {
		t.Run(k.Name, func(t *testing.T) {
			sections := guestSections(t, vmtest.Config{Kernel: k, Files: files, Timeout: 3 * time.Minute}, vmStdlibScript)
			t.Run("path", func(t *testing.T) {
				s := sections.get(t, "path", 0)
				if want := "/tmp/gtrace-path-test|e-path-test|12\n"; !strings.Contains(s.stdout, want) {
					t.Errorf("stdout %q, want %q", s.stdout, want)
				}
				s = sections.get(t, "path-kprobe", 1)
				if want := "The path function can only be used with 'fentry', 'fexit', 'iter' probes"; !strings.Contains(s.stderr, want) {
					t.Errorf("stderr %q, want %q", s.stderr, want)
				}
			})
			t.Run("override", func(t *testing.T) {
				// Debian builds neither kernel with
				// CONFIG_BPF_KPROBE_OVERRIDE (nor an error
				// injection list): the verifier refuses the
				// helper, which the error names at the call.
				s := sections.get(t, "override", 1)
				want := "stdin:1:42-59: ERROR: the BPF verifier rejected the program of kprobe:__x64_sys_getuid: "
				if !strings.Contains(s.stderr, want) || !strings.Contains(s.stderr, "bpf_override_return#58") {
					t.Errorf("stderr %q, want %q naming bpf_override_return", s.stderr, want)
				}
			})
			t.Run("is_err", func(t *testing.T) {
				s := sections.get(t, "is_err", 0)
				if !strings.Contains(s.stdout, "is_err: -2\n") {
					t.Errorf("stdout %q, want is_err: -2 (ENOENT)", s.stdout)
				}
			})
		})
	}
}
