package probe

import (
	"reflect"
	"syscall"
	"testing"
)

// TestParseSelf follows bpftrace's attach point checks: SIGUSR1 is the
// one signal, signal the one trigger.
func TestParseSelf(t *testing.T) {
	tests := []struct {
		text, err string
	}{
		{"self:signal:SIGUSR1", ""},
		{"self:signal:sighup", "sighup is not a supported signal"},
		{"self:signal:SIGUSR2", "SIGUSR2 is not a supported signal"},
		{"self:keypress:space", "keypress is not a supported trigger"},
		{"self:signal", "self probe must have the form self:signal:SIGNAL"},
		{"self:signal:SIGUSR1:x", "self probe must have the form self:signal:SIGNAL"},
	}
	for _, tt := range tests {
		probes, err := Parse(tt.text)
		if tt.err != "" {
			if err == nil || err.Error() != tt.err {
				t.Errorf("Parse(%q) = %v, want error %q", tt.text, err, tt.err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("Parse(%q): %v", tt.text, err)
		}
		p := probes[0]
		if len(probes) != 1 || p.Name != tt.text || p.Signal() != syscall.SIGUSR1 || p.Attached() || p.Context() != NoContext {
			t.Errorf("Parse(%q) = %+v", tt.text, probes)
		}
	}
	if p := (Probe{Kind: Begin}); p.Signal() != 0 {
		t.Errorf("BEGIN waits for signal %v", p.Signal())
	}
}

// TestListSelf lists the self probes as bpftrace does, only when the
// pattern names them.
func TestListSelf(t *testing.T) {
	for pattern, want := range map[string][]string{
		"self:*":           {"self:signal:SIGUSR1"},
		"self:signal:*":    {"self:signal:SIGUSR1"},
		"self:signal:SIG*": {"self:signal:SIGUSR1"},
		"self:signal:X*":   nil,
		"s*:signal:*":      nil,
	} {
		got, err := List(pattern, ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("List(%q) = %q, want %q", pattern, got, want)
		}
	}
}
