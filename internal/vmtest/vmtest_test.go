package vmtest

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
	"github.com/cilium/ebpf/link"

	"gtrace/internal/testutils"
)

func TestRunPattern(t *testing.T) {
	for name, want := range map[string]string{
		"TestKernels":       `^TestKernels$`,
		"TestKernels/6.12":  `^TestKernels$/^6\.12$`,
		"TestA/b_c/(x+y)#1": `^TestA$/^b_c$/^\(x\+y\)#1$`,
	} {
		if got := runPattern(name); got != want {
			t.Errorf("runPattern(%q) = %q, want %q", name, got, want)
		}
	}
}

func TestImagePackage(t *testing.T) {
	got := imagePackage("linux-image-6.1.0-56-cloud-amd64 (= 6.1.192-2)")
	if got != "linux-image-6.1.0-56-cloud-amd64" {
		t.Errorf("imagePackage = %q", got)
	}
}

func TestParseConsole(t *testing.T) {
	mark := marker("0123")
	res := Result{Console: "SeaBIOS\r\n[ 1.0] boot\r\n\n" + mark + " stdout@@\nout\n\n\n" +
		mark + " stderr@@\nerr\n" + mark + " exit 3@@\n[ 2.0] reboot: Power down\r\n"}
	if err := parseConsole(&res, mark); err != nil {
		t.Fatal(err)
	}
	if res.Stdout != "out\n\n" || res.Stderr != "err" || res.ExitCode != 3 {
		t.Errorf("got stdout %q, stderr %q, exit %d", res.Stdout, res.Stderr, res.ExitCode)
	}
	res = Result{Console: "Kernel panic\r\n"}
	if err := parseConsole(&res, mark); err == nil {
		t.Error("no error for a console without markers")
	}
}

// TestInitramfs lists a built archive with cpio(1).
func TestInitramfs(t *testing.T) {
	if _, err := exec.LookPath("cpio"); err != nil {
		testutils.Skip(t, "cpio not found (apt-get install cpio)")
	}
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	if err := os.WriteFile(data, []byte("12345"), 0o640); err != nil {
		t.Fatal(err)
	}
	archive := filepath.Join(dir, "initramfs.cpio")
	if err := initramfs(archive, "#!/bin/sh\n", map[string]string{"/a/b/data": data}); err != nil {
		t.Fatal(err)
	}
	list := exec.Command("cpio", "-itv", "-F", archive)
	out, err := list.CombinedOutput()
	if err != nil {
		t.Fatalf("cpio: %v\n%s", err, out)
	}
	// Fields: mode, links, owner, group, size, date, name.
	got := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if f := strings.Fields(line); len(f) >= 9 {
			got[f[len(f)-1]] = f[0] + " " + f[4]
		}
	}
	for name, want := range map[string]string{
		"init":        "-rwxr-xr-x 10",
		"a":           "drwxr-xr-x 0",
		"a/b":         "drwxr-xr-x 0",
		"a/b/data":    "-rw-r----- 5",
		"bin/busybox": "-rwxr-xr-x",
	} {
		if !strings.HasPrefix(got[name], want) {
			t.Errorf("%s: got %q, want %q\n%s", name, got[name], want, out)
		}
	}
}

// TestRun checks that the command's output and status come back exactly.
func TestRun(t *testing.T) {
	res := Run(t, Config{Kernel: Debian61, Env: map[string]string{"WHO": "it's me"}},
		"sh", "-c", `printf 'a\tb\n\nno newline: %s' "$WHO"; echo oops >&2; exit 3`)
	if res.Stdout != "a\tb\n\nno newline: it's me" || res.Stderr != "oops\n" || res.ExitCode != 3 {
		t.Errorf("got stdout %q, stderr %q, exit %d", res.Stdout, res.Stderr, res.ExitCode)
	}
}

// TestKernels runs in a guest of each kernel with the NVMe namespaces,
// and checks what the kernel offers there.
func TestKernels(t *testing.T) {
	// kprobe.multi needs CONFIG_FPROBE, which Debian's 6.1 lacks.
	kprobeMulti := map[Kernel]bool{Debian61: false, Debian612: true}
	for _, k := range Kernels {
		t.Run(k.Name, func(t *testing.T) {
			if !InVM(t, Config{Kernel: k, NVMe: true}) {
				return
			}
			release := readFile(t, "/proc/sys/kernel/osrelease")
			if !strings.HasPrefix(release, k.Name+".") {
				t.Errorf("kernel release %q, want %s.*", release, k.Name)
			}
			if _, err := os.Stat("/sys/kernel/tracing/kprobe_events"); err != nil {
				t.Errorf("no kprobe_events: %v", err)
			}
			for file, want := range map[string]string{
				"/sys/block/nvme0n1/nsid":                     "1",
				"/sys/block/nvme0n1/size":                     "131072",
				"/sys/block/nvme0n1/queue/zoned":              "none",
				"/sys/block/nvme0n2/nsid":                     "2",
				"/sys/block/nvme0n2/size":                     "131072",
				"/sys/block/nvme0n2/queue/zoned":              "host-managed",
				"/sys/block/nvme0n2/queue/nr_zones":           "16",
				"/sys/block/nvme0n2/queue/chunk_sectors":      "8192",
				"/sys/block/nvme0n2/queue/logical_block_size": "512",
			} {
				if got := readFile(t, file); got != want {
					t.Errorf("%s = %q, want %q", file, got, want)
				}
			}
			if _, err := os.Stat("/dev/ng0n2"); err != nil {
				t.Errorf("no character device for nvme0n2: %v", err)
			}

			if err := attachKprobe(); err != nil {
				t.Errorf("kprobe: %v", err)
			}
			if err := attachFentry(); err != nil {
				t.Errorf("fentry: %v", err)
			}
			err := attachKprobeMulti()
			t.Logf("kprobe.multi: %v", err)
			if got := err == nil; got != kprobeMulti[k] {
				t.Errorf("kprobe.multi works: %v, want %v (%v)", got, kprobeMulti[k], err)
			}
		})
	}
}

// TestGtrace runs the gtrace binary in a guest.
func TestGtrace(t *testing.T) {
	gtrace := BuildGtrace(t)
	// Each busybox sh calls getpid once as it starts.
	script := `
		while :; do sh -c :; done &
		/gtrace -e 'tracepoint:syscalls:sys_enter_getpid { @ = count(); } interval:ms:500 { exit(); }'
		status=$?
		kill $!
		exit $status`
	res := Run(t, Config{Kernel: Debian61, Files: map[string]string{"/gtrace": gtrace}}, "sh", "-c", script)
	if res.ExitCode != 0 || !regexp.MustCompile(`^\n+@: [1-9][0-9]*\n$`).MatchString(res.Stdout) || res.Stderr != "Attached 2 probes\n" {
		t.Errorf("exit %d, stdout:\n%s\nstderr:\n%s", res.ExitCode, res.Stdout, res.Stderr)
	}
}

func readFile(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Error(err)
	}
	return strings.TrimSpace(string(b))
}

// returnZero is a whole program: return 0.
var returnZero = asm.Instructions{asm.Mov.Imm(asm.R0, 0), asm.Return()}

func load(spec *ebpf.ProgramSpec) (*ebpf.Program, error) {
	spec.Instructions = returnZero
	spec.License = "GPL"
	return ebpf.NewProgram(spec)
}

func attachKprobe() error {
	prog, err := load(&ebpf.ProgramSpec{Type: ebpf.Kprobe})
	if err != nil {
		return err
	}
	defer prog.Close()
	l, err := link.Kprobe("vfs_read", prog, nil)
	if err != nil {
		return err
	}
	return l.Close()
}

func attachFentry() error {
	prog, err := load(&ebpf.ProgramSpec{Type: ebpf.Tracing, AttachType: ebpf.AttachTraceFEntry, AttachTo: "vfs_read"})
	if err != nil {
		return err
	}
	defer prog.Close()
	l, err := link.AttachTracing(link.TracingOptions{Program: prog})
	if err != nil {
		return err
	}
	return l.Close()
}

func attachKprobeMulti() error {
	prog, err := load(&ebpf.ProgramSpec{Type: ebpf.Kprobe, AttachType: ebpf.AttachTraceKprobeMulti})
	if err != nil {
		return err
	}
	defer prog.Close()
	l, err := link.KprobeMulti(prog, link.KprobeMultiOptions{Symbols: []string{"vfs_read", "vfs_write"}})
	if err != nil {
		return err
	}
	return l.Close()
}

func TestNVMeArgs(t *testing.T) {
	dir := t.TempDir()
	args, err := nvmeArgs(dir, 0)
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Join(args, " ")
	for _, want := range []string{
		"-device nvme,serial=vmtest,id=nvme0 ",
		"-drive file=" + filepath.Join(dir, "nvme0n1.img") + ",if=none,id=ns1,format=raw " +
			"-device nvme-ns,drive=ns1,bus=nvme0,nsid=1,logical_block_size=512,physical_block_size=512 ",
		"-drive file=" + filepath.Join(dir, "nvme0n2.img") + ",if=none,id=ns2,format=raw " +
			"-device nvme-ns,drive=ns2,bus=nvme0,nsid=2,logical_block_size=512,physical_block_size=512," +
			"zoned=true,zoned.zone_size=4M,zoned.zone_capacity=4M",
	} {
		if !strings.Contains(got+" ", want) {
			t.Errorf("qemu arguments %q lack %q", got, want)
		}
	}
	for _, img := range []string{"nvme0n1.img", "nvme0n2.img"} {
		st, err := os.Stat(filepath.Join(dir, img))
		if err != nil || st.Size() != 64<<20 {
			t.Errorf("%s: %v, want 64 MiB", img, err)
		}
	}
	args, err = nvmeArgs(dir, 1)
	if err != nil || args[1] != "nvme,serial=vmtest,id=nvme0,max_ioqpairs=1" {
		t.Errorf("with one queue, the controller is %q (%v)", args[1], err)
	}
}
