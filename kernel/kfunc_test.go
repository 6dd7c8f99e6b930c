package kernel

import (
	"testing"

	"github.com/cilium/ebpf"

	"gtrace/internal/testutils"
)

// TestKfuncAllowed asks the running kernel about bpf_task_from_pid,
// which tracing programs may call and socket filters may not.
func TestKfuncAllowed(t *testing.T) {
	testutils.RequireRoot(t)
	if _, err := KernelFunc("bpf_task_from_pid"); err != nil {
		testutils.Skip(t, "no bpf_task_from_pid kfunc: "+err.Error())
	}
	tests := []struct {
		name string
		typ  ebpf.ProgramType
		want bool
	}{
		{"bpf_task_from_pid", ebpf.TracePoint, true},
		{"bpf_task_from_pid", ebpf.SocketFilter, false},
		{"gtrace_no_such_kfunc", ebpf.TracePoint, false},
	}
	for _, tt := range tests {
		if got := KfuncAllowed(tt.name, tt.typ); got != tt.want {
			t.Errorf("KfuncAllowed(%s, %v) = %v, want %v", tt.name, tt.typ, got, tt.want)
		}
	}
}
