package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestCheck(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	maps := write("maps.txt", "\n@a: 1\n@b: 2\n\n")
	stamped := write("stamped.txt", "at %H:00\n")
	one := write("one.json", `{"type": "map", "data": {"@x": 1.0}}`)
	lines := write("two.ndjson", "{\"a\": 1}\n{\"b\": [1, 2]}\n")

	tests := []struct {
		name   string
		e      expect
		output string
		ts     int64
		ok     bool
		why    string
	}{
		{"text matches a line with spaces around", expect{expectText, "@x: 1"}, "Attaching\n   @x: 1  \n", -1, true, ""},
		{"text must be the whole line", expect{expectText, "@x: 1"}, "@x: 10\n", -1, false, "expected line not found: @x: 1"},
		{"text is not a regex", expect{expectText, "a.c"}, "abc\n", -1, false, "expected line not found"},
		{"text over two lines", expect{expectText, "a\nb"}, "a\nb\n", -1, true, ""},
		{"text none", expect{expectTextNone, "bad"}, "good\n", -1, true, ""},
		{"text none fails", expect{expectTextNone, "bad"}, "bad\n", -1, false, "unexpected line found: bad"},
		{"regex anchors per line", expect{expectRegex, `^@\w+: \d+$`}, "x\n@a: 3\ny\n", -1, true, ""},
		{"regex not matched", expect{expectRegex, `^z`}, "x\n", -1, false, "expected regex not matched: ^z"},
		{"regex repeated over 1000 times", expect{expectRegex, `^\(/X{5555}\)$`}, "(/" + strings.Repeat("X", 5555) + ")\n", -1, true, ""},
		{"regex repeated one time short", expect{expectRegex, `^/X{1500}$`}, "/" + strings.Repeat("X", 1499) + "\n", -1, false, "not matched"},
		{"regex none", expect{expectRegexNone, `ERROR`}, "fine\n", -1, true, ""},
		{"regex none fails", expect{expectRegexNone, `ERR`}, "ERROR\n", -1, false, "unexpected regex matched"},
		{"file, trimmed", expect{expectFile, maps}, "@a: 1\n@b: 2\n\n\n", -1, true, ""},
		{"file differs", expect{expectFile, maps}, "@a: 1\n@b: 3\n", -1, false, `line 2: want "@b: 2", got "@b: 3"`},
		{"file with localized time", expect{expectFile, stamped}, "at " + time.Unix(0, 0).Format("15") + ":00\n", 0, true, ""},
		{"json by value", expect{expectJSON, one}, `{"data": {"@x": 1}, "type": "map"}` + "\n", -1, true, ""},
		{"json differs", expect{expectJSON, one}, `{"type": "map", "data": {"@x": 2}}`, -1, false, "JSON differs"},
		{"json number is not a string", expect{expectJSON, one}, `{"type": "map", "data": {"@x": "1"}}`, -1, false, "JSON differs"},
		{"json must be one line", expect{expectJSON, one}, "{}\n{}\n", -1, false, "want 1 lines of JSON, got 2"},
		{"ndjson line by line", expect{expectJSON, lines}, "{\"a\": 1.0}\n{\"b\": [1, 2]}\n", -1, true, ""},
		{"ndjson not json", expect{expectJSON, lines}, "{\"a\": 1}\nnope\n", -1, false, "line 2: output is not JSON"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ok, why := check(tt.e, tt.output, tt.ts)
			if ok != tt.ok || !strings.Contains(why, tt.why) {
				t.Errorf("check = %v, %q; want %v, %q", ok, why, tt.ok, tt.why)
			}
		})
	}
}

func TestErrorLine(t *testing.T) {
	out := "Attaching 1 probe...\nstdin:1:5-7: ERROR: unknown function\nbegin { x }\n        ~\nERROR: second\n"
	if got, want := errorLine(out), "stdin:1:5-7: ERROR: unknown function"; got != want {
		t.Errorf("errorLine = %q, want %q", got, want)
	}
	if got := errorLine("fine\n"); got != "" {
		t.Errorf("errorLine = %q, want none", got)
	}
}
