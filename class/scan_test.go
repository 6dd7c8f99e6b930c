package class

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	"github.com/cilium/ebpf/btf"
)

// testSpec builds, marshals and loads BTF of these types: struct bio;
// struct wrap and struct wrap2, which begin with a bio (wrap2 through
// wrap); struct holder, which has a bio after an int; and functions
// taking them.
func testSpec(t *testing.T) *btf.Spec {
	t.Helper()
	u64 := &btf.Int{Name: "u64", Size: 8}
	bio := &btf.Struct{Name: "bio", Size: 8, Members: []btf.Member{{Name: "bi_size", Type: u64}}}
	wrap := &btf.Struct{Name: "wrap", Size: 16, Members: []btf.Member{{Name: "b", Type: bio}, {Name: "x", Type: u64, Offset: 64}}}
	wrap2 := &btf.Struct{Name: "wrap2", Size: 16, Members: []btf.Member{{Name: "w", Type: &btf.Typedef{Name: "wrap_t", Type: wrap}}}}
	holder := &btf.Struct{Name: "holder", Size: 16, Members: []btf.Member{{Name: "x", Type: u64}, {Name: "b", Type: bio, Offset: 64}}}
	ptr := func(t btf.Type) btf.Type { return &btf.Pointer{Target: t} }
	fn := func(name string, params ...btf.Type) *btf.Func {
		proto := &btf.FuncProto{Return: &btf.Void{}}
		for i, p := range params {
			proto.Params = append(proto.Params, btf.FuncParam{Name: "p" + string(rune('a'+i)), Type: p})
		}
		return &btf.Func{Name: name, Type: proto, Linkage: btf.GlobalFunc}
	}
	types := []btf.Type{
		fn("submit_bio", ptr(bio)),
		fn("bio_chain", ptr(bio), ptr(bio)),
		fn("third", u64, u64, ptr(&btf.Const{Type: bio})),
		fn("wrapped", u64, ptr(wrap)),
		fn("wrapped2", ptr(wrap2)),
		fn("held", ptr(holder)),
		fn("too_far", u64, u64, u64, u64, u64, ptr(bio)),
		fn("by_value", ptr(bio), holder),
		fn("not_traceable", ptr(bio)),
		fn("__bpf_trace_block_bio", ptr(u64), ptr(bio)),
	}
	b, err := btf.NewBuilder(types, nil)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := b.Marshal(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	spec, err := btf.LoadSpecFromReader(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	return spec
}

func TestScan(t *testing.T) {
	specs := []Spec{{Name: "vmlinux", BTF: testSpec(t)}}
	traceable := []string{"submit_bio", "bio_chain", "third", "wrapped", "wrapped2", "held", "too_far", "by_value", "__bpf_trace_block_bio"}
	funcs, err := Scan("bio", specs, traceable)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range funcs {
		got = append(got, strings.Join([]string{f.Name, "arg" + string(rune('0'+f.Arg)), f.Param, f.Type, map[bool]string{true: "fentry", false: "no-fentry"}[f.Fentry]}, " "))
	}
	want := []string{
		"bio_chain arg0 pa bio fentry",
		"by_value arg0 pa bio no-fentry",
		"submit_bio arg0 pa bio fentry",
		"third arg2 pc bio fentry",
		"wrapped arg1 pb wrap fentry",
		"wrapped2 arg0 pa wrap2 fentry",
	}
	if !slices.Equal(got, want) {
		t.Errorf("Scan found\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if _, err := Scan("nosuch", specs, traceable); err == nil || err.Error() != "struct nosuch is not in the kernel's BTF" {
		t.Errorf("Scan of an unknown struct: %v", err)
	}
}

func TestSelect(t *testing.T) {
	funcs := []Func{{Name: "bio_endio"}, {Name: "submit_bio"}, {Name: "nvme:nvme_setup_bio"}, {Name: "blk_mq_submit_bio"}}
	for _, tc := range []struct {
		patterns []string
		want     []string
	}{
		{nil, []string{"bio_endio", "submit_bio", "nvme:nvme_setup_bio", "blk_mq_submit_bio"}},
		{[]string{"bio_*", "submit_bio*"}, []string{"bio_endio", "submit_bio"}},
		{[]string{"nvme_*"}, []string{"nvme:nvme_setup_bio"}},
		{[]string{"*submit*"}, []string{"submit_bio", "blk_mq_submit_bio"}},
	} {
		var got []string
		for _, f := range Select(funcs, tc.patterns) {
			got = append(got, f.Name)
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("Select(%q) = %q, want %q", tc.patterns, got, tc.want)
		}
	}
}
