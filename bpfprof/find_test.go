package bpfprof

import (
	"testing"

	"gtrace/bpfstat"
)

func TestMatch(t *testing.T) {
	progs := []bpfstat.Program{
		{ID: 3, Name: "kprobe_vfs_read"},
		{ID: 7, Name: "dup"},
		{ID: 9, Name: "dup"},
		{ID: 12, Name: "uprobe__bin_fo"},
	}
	tests := []struct {
		target string
		id     uint32
		err    string
	}{
		{target: "3", id: 3},
		{target: "kprobe_vfs_read", id: 3},
		{target: "kprobe_vfs_read_longer", id: 3}, // cut as the kernel cuts names
		{target: "12", id: 12},
		{target: "4", err: "no BPF program with id 4"},
		{target: "nosuch", err: `no BPF program named "nosuch"`},
		{target: "dup", err: `2 BPF programs are named "dup", give one id: 7, 9`},
		{target: "", err: "no program id or name given"},
		{target: "99999999999", err: `no BPF program named "99999999999"`},
	}
	for _, tc := range tests {
		p, err := match(progs, tc.target)
		if tc.err != "" {
			if err == nil || err.Error() != tc.err {
				t.Errorf("match(%q) = %+v, %v; want error %q", tc.target, p, err, tc.err)
			}
			continue
		}
		if err != nil || p.ID != tc.id {
			t.Errorf("match(%q) = %+v, %v; want id %d", tc.target, p, err, tc.id)
		}
	}
}
