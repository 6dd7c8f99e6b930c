package probe

import (
	"encoding/json"
	"reflect"
	"slices"
	"testing"

	"gtrace/internal/testutils"
	"gtrace/symbol"
)

// libc is the C library's path, a binary with thousands of functions.
func libc(t *testing.T) string {
	t.Helper()
	probes, err := Parse("uprobe:libc:getpid")
	if err != nil {
		testutils.Skip(t, "no C library: "+err.Error())
	}
	return probes[0].Target
}

// TestJoinUprobes joins uprobes on functions of the C library, and
// leaves alone those a multi-uprobe would attach otherwise.
func TestJoinUprobes(t *testing.T) {
	exe := libc(t)
	on := func(kind Kind, fn string) Probe {
		return Probe{Kind: kind, Target: exe, Event: fn, Name: kind.String() + ":" + exe + ":" + fn}
	}
	a, b := "getpid", "getppid"
	withOffset := on(Uprobe, a)
	withOffset.Offset, withOffset.Name = 1, withOffset.Name+"+1"
	atAddress := Probe{Kind: Uprobe, Target: exe, Address: 4096, Name: "uprobe:" + exe + ":4096"}
	multi := func(kind Kind, funcs ...string) Probe {
		return Probe{Kind: kind, Target: exe, Event: "getp*", Name: kind.String() + ":" + exe + ":getp*", Funcs: funcs}
	}
	tests := []struct {
		name   string
		probes []Probe
		want   []Probe
	}{
		{"two functions", []Probe{on(Uprobe, a), on(Uprobe, b)}, []Probe{multi(Uprobe, a, b)}},
		{"uretprobes", []Probe{on(Uretprobe, b), on(Uretprobe, a)}, []Probe{multi(Uretprobe, b, a)}},
		{"one function", []Probe{on(Uprobe, a)}, []Probe{on(Uprobe, a)}},
		{"offset and address", []Probe{withOffset, on(Uprobe, a), atAddress, on(Uprobe, b)},
			[]Probe{withOffset, multi(Uprobe, a, b), atAddress}},
		{"missing function", []Probe{on(Uprobe, "nosuch"), on(Uprobe, a), on(Uprobe, b)},
			[]Probe{on(Uprobe, "nosuch"), multi(Uprobe, a, b)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			text := tt.probes[0].Kind.String() + ":" + exe + ":getp*"
			if got := JoinUprobes(text, tt.probes); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

// TestJoinUprobesSplits splits a wildcard over thousands of functions
// into multi-uprobes whose requests fit a message.
func TestJoinUprobesSplits(t *testing.T) {
	exe := libc(t)
	all, err := symbol.Functions(exe)
	if err != nil {
		t.Fatal(err)
	}
	var probes []Probe
	for _, f := range all {
		probes = append(probes, Probe{Kind: Uprobe, Target: exe, Event: f, Name: "uprobe:" + exe + ":" + f})
	}
	var joined, alone []string
	multis := 0
	for _, p := range JoinUprobes("uprobe:"+exe+":*", probes) {
		if p.Funcs == nil {
			alone = append(alone, p.Event) // of size 0, say
			continue
		}
		multis++
		if b, _ := json.Marshal(p.Funcs); len(b) > maxMultiJSON+1 {
			t.Errorf("a multi-uprobe of %d functions is %d bytes of JSON, want at most %d", len(p.Funcs), len(b), maxMultiJSON)
		}
		joined = append(joined, p.Funcs...)
	}
	if multis < 2 {
		t.Errorf("%d functions joined into %d multi-uprobes, want them split", len(all), multis)
	}
	want := slices.DeleteFunc(slices.Clone(all), func(f string) bool { return slices.Contains(alone, f) })
	if !slices.Equal(joined, want) {
		t.Errorf("joined %d functions, want %d in order", len(joined), len(want))
	}
}
