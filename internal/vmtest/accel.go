package vmtest

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

var accel struct {
	once sync.Once
	name string
}

// chooseAccel returns qemu's accelerator, "kvm" or "tcg", once per
// process.
func chooseAccel(t testing.TB, vmlinuz string) string {
	accel.once.Do(func() { accel.name = findAccel(t, vmlinuz) })
	return accel.name
}

// findAccel returns GTRACE_VMTEST_ACCEL if set, else "kvm" if KVM boots
// vmlinuz within 10 s, else "tcg". Nested KVM can hang at boot, so /dev/kvm
// alone proves nothing. The verdict is kept in the cache for the rest of
// the host's boot: a process that finds it there skips the check.
func findAccel(t testing.TB, vmlinuz string) string {
	if name := os.Getenv("GTRACE_VMTEST_ACCEL"); name != "" {
		return name
	}
	f, err := os.OpenFile("/dev/kvm", os.O_RDWR, 0)
	if err != nil {
		return "tcg"
	}
	f.Close()

	cache, err := cacheDir()
	if err != nil {
		return "tcg"
	}
	id, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		return "tcg"
	}
	hostBoot := strings.TrimSpace(string(id))
	verdict := filepath.Join(cache, "accel")
	unlock, err := lock(verdict + ".lock")
	if err != nil {
		return "tcg"
	}
	defer unlock()
	if b, err := os.ReadFile(verdict); err == nil {
		if boot, name, ok := strings.Cut(strings.TrimSpace(string(b)), " "); ok && boot == hostBoot {
			return name
		}
	}

	dir, err := os.MkdirTemp("", "vmtest-kvm-")
	if err != nil {
		return "tcg"
	}
	defer os.RemoveAll(dir)
	start := time.Now()
	name := "tcg"
	cfg := withDefaults(Config{Timeout: time.Second})
	if _, err := boot(dir, "kvm", vmlinuz, cfg, []string{"true"}, 10*time.Second); err == nil {
		name = "kvm"
	}
	t.Logf("vmtest: KVM check took %.1fs: using %s", time.Since(start).Seconds(), name)
	os.WriteFile(verdict, []byte(hostBoot+" "+name+"\n"), 0o644)
	return name
}
