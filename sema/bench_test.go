package sema

import "testing"

func TestBenchNames(t *testing.T) {
	tests := []struct {
		src, want string
	}{
		{`bench:a { @x = 1; } bench:b { @y = 1; }`, ""},
		{`bench:a { @x = 1; } BENCH:a { @y = 1; }`, `"a" was used as the name for more than one BENCH probe`},
	}
	for _, tt := range tests {
		t.Run(tt.src, func(t *testing.T) {
			if _, got := check(t, tt.src, false); got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}
