package pprofout

import (
	"bytes"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/pprof/profile"

	"gtrace/output"
)

// frames of the tests, root first as StackSamples gives them.
var (
	mainFrame  = output.Frame{Addr: 0x401160, Func: "main", File: "/bin/loop"}
	inlined    = output.Frame{Addr: 0x401126, Func: "hot", File: "/bin/loop"}
	callee     = output.Frame{Addr: 0x401126, Func: "add", File: "/bin/loop"} // inlined into hot
	unknown    = output.Frame{Addr: 0x7f00, Func: "0x7f00"}
	syscall    = output.Frame{Addr: 0xffffffff81002000, Func: "do_syscall_64", Kernel: true}
	kernelLeaf = output.Frame{Addr: 0xffffffff81001000, Func: "ksys_read", Kernel: true}
)

func TestProfile(t *testing.T) {
	maps := []*output.StackMap{
		{Name: "@", Kind: output.Count, Samples: []output.StackSample{
			{Frames: []output.Frame{mainFrame, inlined, callee, syscall, kernelLeaf}, Value: 7,
				Keys: []output.Value{output.Str("loop"), output.Int(42)}, KeyNames: []string{"comm", "pid"}},
			{Frames: []output.Frame{unknown, mainFrame}, Value: 2,
				Keys: []output.Value{output.Str("other"), output.Uint(1)}, KeyNames: []string{"comm", ""}},
		}},
		{Name: "@bytes", Kind: output.Sum, Samples: []output.StackSample{
			{Frames: []output.Frame{mainFrame}, Value: 4096},
		}},
	}
	var buf bytes.Buffer
	if err := Write(&buf, maps, time.Unix(1, 0)); err != nil {
		t.Fatal(err)
	}
	p, err := profile.Parse(&buf)
	if err != nil {
		t.Fatal(err)
	}
	types := []string{p.SampleType[0].Type + "/" + p.SampleType[0].Unit, p.SampleType[1].Type + "/" + p.SampleType[1].Unit}
	if !slices.Equal(types, []string{"@/count", "@bytes/units"}) || p.DefaultSampleType != "@" {
		t.Errorf("sample types %v, default %q", types, p.DefaultSampleType)
	}
	if len(p.Sample) != 3 {
		t.Fatalf("got %d samples, want 3", len(p.Sample))
	}
	tests := []struct {
		values   []int64
		funcs    []string // leaf first, a location's lines joined by "|"
		files    []string
		labels   map[string][]string
		numLabel map[string][]int64
	}{
		{[]int64{7, 0}, []string{"ksys_read", "do_syscall_64", "add|hot", "main"},
			[]string{"[kernel.kallsyms]", "[kernel.kallsyms]", "/bin/loop", "/bin/loop"},
			map[string][]string{"comm": {"loop"}}, map[string][]int64{"pid": {42}}},
		{[]int64{2, 0}, []string{"main", "0x7f00"}, []string{"/bin/loop", "[unknown]"},
			map[string][]string{"comm": {"other"}}, map[string][]int64{"key2": {1}}},
		{[]int64{0, 4096}, []string{"main"}, []string{"/bin/loop"}, nil, nil},
	}
	for i, tt := range tests {
		s := p.Sample[i]
		var funcs, files []string
		for _, loc := range s.Location {
			var names []string
			for _, l := range loc.Line {
				names = append(names, l.Function.Name)
			}
			funcs = append(funcs, strings.Join(names, "|"))
			files = append(files, loc.Mapping.File)
		}
		if !slices.Equal(s.Value, tt.values) || !slices.Equal(funcs, tt.funcs) || !slices.Equal(files, tt.files) {
			t.Errorf("sample %d: values %v, functions %v in %v; want %v, %v in %v", i, s.Value, funcs, files, tt.values, tt.funcs, tt.files)
		}
		if len(s.Label) != len(tt.labels) || len(s.NumLabel) != len(tt.numLabel) {
			t.Errorf("sample %d: labels %v %v, want %v %v", i, s.Label, s.NumLabel, tt.labels, tt.numLabel)
		}
		for k, v := range tt.labels {
			if !slices.Equal(s.Label[k], v) {
				t.Errorf("sample %d: label %s = %v, want %v", i, k, s.Label[k], v)
			}
		}
		for k, v := range tt.numLabel {
			if !slices.Equal(s.NumLabel[k], v) {
				t.Errorf("sample %d: numeric label %s = %v, want %v", i, k, s.NumLabel[k], v)
			}
		}
	}
	// One location per address, shared by the samples; the mappings
	// cover their addresses and need no symbolization.
	if p.Mapping[0].File != "/bin/loop" {
		t.Errorf("the first mapping, pprof's binary, is %s, want /bin/loop", p.Mapping[0].File)
	}
	if len(p.Location) != 5 {
		t.Errorf("got %d locations, want 5", len(p.Location))
	}
	for _, loc := range p.Location {
		m := loc.Mapping
		if !m.HasFunctions || loc.Address < m.Start || loc.Address >= m.Limit {
			t.Errorf("location %#x in mapping %s [%#x, %#x), functions %v", loc.Address, m.File, m.Start, m.Limit, m.HasFunctions)
		}
	}
}
