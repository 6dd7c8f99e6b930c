package vmtest

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"gtrace/internal/testutils"
)

// Config describes one boot.
type Config struct {
	Kernel Kernel

	// Files are copied into the initramfs: guest path to host path.
	// Executables must be statically linked.
	Files map[string]string

	// Env is added to the command's environment, beside PATH=/bin and
	// GTRACE_VMTEST=1.
	Env map[string]string

	// NVMe adds an NVMe controller with two namespaces of 64 MiB and
	// 512-byte blocks, each backed by a sparse temporary file:
	// /dev/nvme0n1, conventional, and /dev/nvme0n2, zoned and
	// host-managed, in 16 zones of 4 MiB (8192 sectors) whose capacity is
	// their size. /dev/ng0n1 and /dev/ng0n2 are their character devices,
	// for NVMe passthrough commands. The names are checked before the
	// command runs (see nvmeNames).
	NVMe bool

	// NVMeQueues, if not 0, is the number of I/O queues of the NVMe
	// controller; by default Linux makes one per CPU. With one queue per
	// CPU, the interrupt handler completes requests in batches
	// (nvme_complete_batch_req) and nvme_complete_rq is never called; with
	// a single queue, every request completes through nvme_complete_rq,
	// from a softirq, but 6.1 also starts requests from a kworker rather
	// than from the process that issued them.
	NVMeQueues int

	// Modules are loadable modules of the kernel's package, by name
	// ("dummy", "nls_cp437"), loaded with insmod in this order before the
	// command runs; a module's dependencies must come before it. The
	// package has no modules.dep, so nothing is loaded for you: an
	// uncompressed module whose depends= lists a module not loaded
	// before it is an error here, a compressed one (6.12's .ko.xz,
	// decompressed in the guest) fails at insmod. If a module fails to
	// load, the command does not run: the Result has exit status 125 and
	// the error in Stderr.
	Modules []string

	MemoryMB int           // guest memory; default 1024
	CPUs     int           // default 2
	Timeout  time.Duration // limit for the command in the guest; default 2 minutes
}

// Result is what the command did in the guest.
type Result struct {
	Stdout   string
	Stderr   string
	ExitCode int // 143 when the command was stopped at Config.Timeout

	Console string        // the whole serial console, for failure messages
	Boot    time.Duration // qemu's wall time, boot to power off
}

// bootMargin is the time given to boot and power off, beyond the command's
// own limit, before qemu is killed.
const bootMargin = 90 * time.Second

// Run boots cfg and runs argv in the guest as root. It skips t (fails it
// under CI=true) when qemu, busybox-static or the kernel are not
// available, and fails t when the boot itself goes wrong; the command's
// own failure is only reported in the Result.
func Run(t testing.TB, cfg Config, argv ...string) Result {
	t.Helper()
	if len(argv) == 0 {
		t.Fatal("vmtest.Run: no command")
	}
	vmlinuz := requireKernel(t, cfg.Kernel)
	for _, host := range cfg.Files {
		if err := checkStatic(host); err != nil {
			t.Fatal(err)
		}
	}
	accel := chooseAccel(t, vmlinuz)
	cfg = withDefaults(cfg)
	res, err := boot(t.TempDir(), accel, vmlinuz, cfg, argv, cfg.Timeout+bootMargin)
	if errors.Is(err, errNoInit) {
		// Under TCG a stock kernel now and then oopses while it boots,
		// patching its own code; that says nothing of the command.
		t.Logf("vmtest: kernel %s: %v\nbooting once more", cfg.Kernel.Name, err)
		res, err = boot(t.TempDir(), accel, vmlinuz, cfg, argv, cfg.Timeout+bootMargin)
	}
	if err != nil {
		t.Fatalf("vmtest: kernel %s: %v", cfg.Kernel.Name, err)
	}
	t.Logf("vmtest: kernel %s under %s: %s exited %d, %.1fs from boot to power off",
		cfg.Kernel.Name, accel, argv[0], res.ExitCode, res.Boot.Seconds())
	return res
}

// requireKernel checks the tools and returns the kernel image, skipping t
// when something is missing.
func requireKernel(t testing.TB, k Kernel) string {
	t.Helper()
	if k.Package == "" {
		t.Fatal("vmtest: Config.Kernel is not set")
	}
	if _, err := exec.LookPath("qemu-system-x86_64"); err != nil {
		testutils.Skip(t, "qemu-system-x86_64 not found (apt-get install qemu-system-x86)")
	}
	if _, err := os.Stat(busybox); err != nil {
		testutils.Skip(t, busybox+" not found (apt-get install busybox-static)")
	}
	if err := checkStatic(busybox); err != nil {
		testutils.Skip(t, busybox+" is not static (apt-get install busybox-static)")
	}
	vmlinuz, err := k.Vmlinuz()
	if err != nil {
		testutils.Skip(t, err.Error())
	}
	return vmlinuz
}

func withDefaults(cfg Config) Config {
	if cfg.MemoryMB == 0 {
		cfg.MemoryMB = 1024
	}
	if cfg.CPUs == 0 {
		cfg.CPUs = 2
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = 2 * time.Minute
	}
	return cfg
}

// boot runs one VM in dir and collects what the command printed. qemu is
// killed after wall time kill.
func boot(dir, accel, vmlinuz string, cfg Config, argv []string, kill time.Duration) (Result, error) {
	limit := int((cfg.Timeout + time.Second - 1) / time.Second)

	nonce := make([]byte, 8)
	rand.Read(nonce)
	mark := marker(hex.EncodeToString(nonce))
	files := cfg.Files
	var modules []string
	if len(cfg.Modules) > 0 {
		kdir, err := cfg.Kernel.Dir()
		if err != nil {
			return Result{}, err
		}
		var mfiles map[string]string
		mfiles, modules, err = moduleFiles(kdir, cfg.Modules)
		if err != nil {
			return Result{}, err
		}
		files = map[string]string{}
		for g, h := range cfg.Files {
			files[g] = h
		}
		for g, h := range mfiles {
			if _, ok := files[g]; ok {
				return Result{}, fmt.Errorf("guest path %s is both in Files and a module", g)
			}
			files[g] = h
		}
	}
	script, err := initScript(hex.EncodeToString(nonce), cfg.Env, argv, limit, cfg.NVMe, modules)
	if err != nil {
		return Result{}, err
	}
	initrd := filepath.Join(dir, "initramfs.cpio")
	if err := initramfs(initrd, script, files); err != nil {
		return Result{}, err
	}

	args := []string{
		"-nographic", "-no-reboot", "-nic", "none",
		"-accel", accel,
		"-m", strconv.Itoa(cfg.MemoryMB),
		"-smp", strconv.Itoa(cfg.CPUs),
		"-kernel", vmlinuz,
		"-initrd", initrd,
		"-append", "console=ttyS0 quiet panic=-1",
	}
	if accel == "kvm" {
		args = append(args, "-cpu", "host")
	}
	if cfg.NVMe {
		nvme, err := nvmeArgs(dir, cfg.NVMeQueues)
		if err != nil {
			return Result{}, err
		}
		args = append(args, nvme...)
	}

	ctx, cancel := context.WithTimeout(context.Background(), kill)
	defer cancel()
	qemu := exec.CommandContext(ctx, "qemu-system-x86_64", args...)
	var console, stderr bytes.Buffer
	qemu.Stdout, qemu.Stderr = &console, &stderr
	start := time.Now()
	err = qemu.Run()
	res := Result{Console: console.String(), Boot: time.Since(start)}
	switch {
	case ctx.Err() != nil:
		err = fmt.Errorf("qemu killed after %v", kill)
	case err != nil:
		err = fmt.Errorf("qemu: %v: %s", err, strings.TrimSpace(stderr.String()))
	default:
		err = parseConsole(&res, mark)
	}
	if err != nil && !strings.Contains(res.Console, mark+" started@@") {
		err = fmt.Errorf("%w (%v)", errNoInit, err)
	}
	if err != nil {
		return res, fmt.Errorf("%w%s", err, consoleTail(res.Console))
	}
	return res, nil
}

// errNoInit is a boot that failed before init ran the command.
var errNoInit = errors.New("the guest kernel failed before init ran")

// nvmeArgs creates the namespaces' backing files in dir and returns
// qemu's arguments for Config.NVMe and Config.NVMeQueues.
func nvmeArgs(dir string, queues int) ([]string, error) {
	const size = 64 << 20
	controller := "nvme,serial=vmtest,id=nvme0"
	if queues > 0 {
		controller += ",max_ioqpairs=" + strconv.Itoa(queues)
	}
	args := []string{"-device", controller}
	for i, opts := range []string{"", ",zoned=true,zoned.zone_size=4M,zoned.zone_capacity=4M"} {
		nsid := strconv.Itoa(i + 1)
		img := filepath.Join(dir, "nvme0n"+nsid+".img")
		if err := os.WriteFile(img, nil, 0o600); err != nil {
			return nil, err
		}
		if err := os.Truncate(img, size); err != nil {
			return nil, err
		}
		args = append(args,
			"-drive", "file="+img+",if=none,id=ns"+nsid+",format=raw",
			"-device", "nvme-ns,drive=ns"+nsid+",bus=nvme0,nsid="+nsid+
				",logical_block_size=512,physical_block_size=512"+opts)
	}
	return args, nil
}

// parseConsole fills in stdout, stderr and the exit status from the
// marked lines the init script printed.
func parseConsole(res *Result, mark string) error {
	rest := res.Console
	cut := func(sep string) (string, bool) {
		before, after, ok := strings.Cut(rest, sep)
		rest = after
		return before, ok
	}
	if _, ok := cut(mark + " stdout@@\n"); !ok {
		return errors.New("no output from the guest: the command did not finish")
	}
	stdout, ok1 := cut("\n" + mark + " stderr@@\n")
	stderr, ok2 := cut("\n" + mark + " exit ")
	status, ok3 := cut("@@")
	code, err := strconv.Atoi(status)
	if !ok1 || !ok2 || !ok3 || err != nil {
		return errors.New("garbled output from the guest")
	}
	res.Stdout, res.Stderr, res.ExitCode = stdout, stderr, code
	return nil
}

// consoleTail formats the end of the console log for an error message.
func consoleTail(console string) string {
	const max = 4000
	if len(console) > max {
		console = "..." + console[len(console)-max:]
	}
	return "\nserial console:\n" + console
}
