package builtin

import "testing"

func TestLookup(t *testing.T) {
	tests := []struct {
		name string
		want Var
	}{
		{"pid", Pid},
		{"ncpus", Ncpus},
		{"arg0", ArgN},
		{"arg12", ArgN},
		{"sarg3", SargN},
		{"arg", None},
		{"arg123", None},
		{"argx", None},
		{"argN", None},
		{"sargN", None},
		{"pidx", None},
		{"", None},
		{"__builtin_comm", Comm},
		{"__builtin_probetype", Probetype},
		{"__builtin_arg0", None},
		{"__builtin___builtin_comm", None},
		{"__builtin_x", None},
		{"leader_comm", LeaderComm},
	}
	for _, tt := range tests {
		if got := Lookup(tt.name); got != tt.want {
			t.Errorf("Lookup(%q) = %v, want %v", tt.name, got, tt.want)
		}
	}
}

// TestNames checks that every variable but the numbered ones is found
// by its own name.
func TestNames(t *testing.T) {
	for _, v := range All() {
		if v == ArgN || v == SargN {
			continue
		}
		if got := Lookup(v.String()); got != v {
			t.Errorf("Lookup(%q) = %v", v.String(), got)
		}
	}
}

func TestReserved(t *testing.T) {
	for name, want := range map[string]bool{
		"comm": true, "arg2": true, "__builtin_retval": true, "__builtin_x": true,
		"uint8": false, "task_struct": false, "_builtin": false,
	} {
		if got := Reserved(name); got != want {
			t.Errorf("Reserved(%q) = %v, want %v", name, got, want)
		}
	}
}

func TestDeclareFuncs(t *testing.T) {
	if IsFunc("test_only_func") {
		t.Fatal("test_only_func is a function before its declaration")
	}
	DeclareFuncs("test_only_func")
	if !IsFunc("test_only_func") {
		t.Error("test_only_func is no function after its declaration")
	}
}
