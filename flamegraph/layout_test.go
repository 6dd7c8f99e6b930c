package flamegraph

import (
	"fmt"
	"strings"
	"testing"
)

func frames(names ...string) []Frame {
	var fs []Frame
	for _, n := range names {
		fs = append(fs, Frame{Name: n, Kind: User})
	}
	return fs
}

func TestLayout(t *testing.T) {
	tests := []struct {
		name   string
		stacks []Stack
		want   []string // "depth name x+width", root first, each after its parent
	}{
		{"one stack", []Stack{{frames("main", "hot"), 10}},
			[]string{"0 all 0+100", "1 main 0+100", "2 hot 0+100"}},
		{"widths proportional to values, siblings by name",
			[]Stack{{frames("main", "hot"), 75}, {frames("main", "cold"), 25}},
			[]string{"0 all 0+100", "1 main 0+100", "2 cold 0+25", "2 hot 25+75"}},
		{"stacks merge where they share a root; a parent spans its children and itself",
			[]Stack{{frames("main"), 20}, {frames("main", "a", "b"), 30}, {frames("init"), 50}},
			[]string{"0 all 0+100", "1 init 0+50", "1 main 50+50", "2 a 50+30", "3 b 50+30"}},
		{"same name, other kind: two frames",
			[]Stack{{[]Frame{{Name: "f", Kind: User}}, 50}, {[]Frame{{Name: "f", Kind: Kernel}}, 50}},
			[]string{"0 all 0+100", "1 f 0+50", "1 f 50+50"}},
		{"frames under a tenth of a pixel left out",
			[]Stack{{frames("big"), 10000}, {frames("tiny"), 1}},
			[]string{"0 all 0+100", "1 big 0+99.99"}},
		{"no stacks", nil, []string{"0 all 0+100"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			for _, r := range Layout(tt.stacks, 100) {
				got = append(got, fmt.Sprintf("%d %s %.4g+%.4g", r.Depth, r.Name, r.X, r.Width))
			}
			if strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
		})
	}
}

func TestWrite(t *testing.T) {
	stacks := []Stack{{[]Frame{{Name: "comm<&>"}, {Name: "main", Kind: User}, {Name: "sys_read", Kind: Kernel}}, 3}}
	opts := Options{Title: "T", Unit: "samples"}
	tests := []struct {
		write func(*strings.Builder) error
		start string
	}{
		{func(b *strings.Builder) error { return WriteSVG(b, stacks, opts) }, "<?xml"},
		{func(b *strings.Builder) error { return WriteHTML(b, stacks, opts) }, "<!DOCTYPE html>"},
	}
	for _, tt := range tests {
		var b strings.Builder
		if err := tt.write(&b); err != nil {
			t.Fatal(err)
		}
		out := b.String()
		for _, want := range []string{tt.start, `data-name="comm&lt;&amp;&gt;"`, "<title>main (3 samples, 100.00%)</title>",
			`id="search"`, `id="reset"`, "<![CDATA[", "function zoom("} {
			if !strings.Contains(out, want) {
				t.Errorf("output starting %q lacks %q", tt.start, want)
			}
		}
	}
}

func TestLabel(t *testing.T) {
	tests := []struct {
		name  string
		width float64
		want  string
	}{
		{"main", 100, "main"},
		{"a_long_function_name", 60, "a_lon.."},
		{"main", 20, ""},
	}
	for _, tt := range tests {
		if got := label(tt.name, tt.width); got != tt.want {
			t.Errorf("label(%q, %g) = %q, want %q", tt.name, tt.width, got, tt.want)
		}
	}
}
