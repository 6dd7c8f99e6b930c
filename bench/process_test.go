package bench

import "testing"

func TestCountLost(t *testing.T) {
	tests := []struct {
		out  string
		want uint64
	}{
		{"", 0},
		{"Attaching 1 probe...\n1 2\n", 0},
		{"Lost 12 events\n1 2\nLost 30 events\n", 42},
		{"1 2 Lost 5 events\nWARNING: Total lost event count: 7\n", 0},
	}
	for _, tt := range tests {
		if got := countLost([]byte(tt.out)); got != tt.want {
			t.Errorf("countLost(%q) = %d, want %d", tt.out, got, tt.want)
		}
	}
}
