package runtime

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestPrivilegeError(t *testing.T) {
	const bpf, perfmon, sysAdmin = 1 << capBPF, 1 << capPerfmon, 1 << capSysAdmin
	tests := []struct {
		name     string
		eff      uint64
		lockdown string
		want     string // a part of the error, or "" for none
	}{
		{"none", 0, "", "missing CAP_BPF capability"},
		{"perfmon only", perfmon, "", "missing CAP_BPF capability"},
		{"bpf only", bpf, "", "missing CAP_PERFMON capability"},
		{"bpf and perfmon", bpf | perfmon, "", ""},
		{"sys_admin", sysAdmin, "none", ""},
		{"all", ^uint64(0), "integrity", ""},
		{"confidentiality", ^uint64(0), "confidentiality", "kernel lockdown is enabled and set to 'confidentiality'"},
		{"capability first", 0, "confidentiality", "missing CAP_BPF capability"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := privilegeError(tt.eff, tt.lockdown)
			switch {
			case tt.want == "" && err != nil:
				t.Errorf("error %v, want none", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Errorf("error %v, want %q", err, tt.want)
			}
		})
	}
}

func TestAdminError(t *testing.T) {
	const bpf, perfmon, sysAdmin = 1 << capBPF, 1 << capPerfmon, 1 << capSysAdmin
	for _, eff := range []uint64{0, bpf | perfmon} {
		err := adminError(eff, "gtrace top lists every BPF program")
		if err == nil || !strings.HasPrefix(err.Error(), "missing CAP_SYS_ADMIN capability: gtrace top ") {
			t.Errorf("adminError(%#x) = %v, want a missing CAP_SYS_ADMIN", eff, err)
		}
	}
	if err := adminError(sysAdmin, "gtrace top lists every BPF program"); err != nil {
		t.Errorf("adminError with CAP_SYS_ADMIN = %v, want none", err)
	}
}

func TestLockdownMode(t *testing.T) {
	tests := []struct{ file, want string }{
		{"[none] integrity confidentiality\n", "none"},
		{"none [integrity] confidentiality\n", "integrity"},
		{"none integrity [confidentiality]\n", "confidentiality"},
		{"", ""},
	}
	dir := t.TempDir()
	for _, tt := range tests {
		path := filepath.Join(dir, "lockdown")
		if err := os.WriteFile(path, []byte(tt.file), 0o644); err != nil {
			t.Fatal(err)
		}
		if got := lockdownMode(path); got != tt.want {
			t.Errorf("lockdownMode(%q) = %q, want %q", tt.file, got, tt.want)
		}
	}
	if got := lockdownMode(filepath.Join(dir, "missing")); got != "" {
		t.Errorf("lockdownMode of a missing file = %q, want \"\"", got)
	}
}
