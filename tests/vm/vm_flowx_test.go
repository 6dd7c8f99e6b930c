package vm

import (
	"os"
	"testing"
	"time"

	"gtrace/internal/vmtest"
)

func TestVMFlowX(t *testing.T) {
	script, err := os.ReadFile("/tmp/flowx.sh")
	if err != nil {
		t.Skip()
	}
	files := map[string]string{"/gtrace": vmtest.BuildGtrace(t)}
	for _, k := range vmtest.Kernels {
		if os.Getenv("FLOWX_KERNEL") != "" && os.Getenv("FLOWX_KERNEL") != k.Name {
			continue
		}
		t.Run(k.Name, func(t *testing.T) {
			res := vmtest.Run(t, vmtest.Config{Kernel: k, Files: files, NVMe: true, Timeout: 6 * time.Minute}, "sh", "-c", vmShellFuncs+string(script))
			t.Logf("exit %d\nstdout:\n%s\nstderr:\n%s", res.ExitCode, res.Stdout, res.Stderr)
		})
	}
}
