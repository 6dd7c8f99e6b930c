package output

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

func TestTestResult(t *testing.T) {
	names := []string{"ok", "broken", "slow"}
	passed := []bool{true, false, true}
	outs := []string{"hidden\n", "first\n\nsecond\n", ""}
	took := []time.Duration{250, 12 * time.Microsecond, 3 * time.Second}
	var text, json bytes.Buffer
	tp, jp := NewText(&text, &text), NewJSON(&json)
	for i := range names {
		if err := tp.TestResult(names, i, took[i], passed[:i+1], outs[i]); err != nil {
			t.Fatal(err)
		}
		if err := jp.TestResult(names, i, took[i], passed[:i+1], outs[i]); err != nil {
			t.Fatal(err)
		}
	}
	g, r, z := "\033[32m", "\033[31m", "\033[0m"
	wantText := strings.Join([]string{
		g + "[==========]" + z + " Running 3 tests.",
		g + "[ RUN      ]" + z + " ok",
		g + "[       OK ]" + z + " ok (250 ns)",
		g + "[ RUN      ]" + z + " broken",
		"first",
		"second",
		r + "[  FAILED  ]" + z + " broken (12 us)",
		g + "[ RUN      ]" + z + " slow",
		g + "[       OK ]" + z + " slow (3 s)",
		g + "[==========]" + z + " 3 tests ran.",
		g + "[  PASSED  ]" + z + " 2 tests.",
		r + "[  FAILED  ]" + z + " 1 test, listed below:",
		r + "[  FAILED  ]" + z + " broken",
	}, "\n") + "\n"
	if text.String() != wantText {
		t.Errorf("text:\n%q\nwant:\n%q", text.String(), wantText)
	}
	wantJSON := `{"type": "test_result", "data": {"ok": {"duration": 250, "passed": true, "output": "hidden\n"}}}
{"type": "test_result", "data": {"broken": {"duration": 12000, "passed": false, "output": "first\n\nsecond\n"}}}
{"type": "test_result", "data": {"slow": {"duration": 3000000000, "passed": true, "output": ""}}}
`
	if json.String() != wantJSON {
		t.Errorf("json:\n%s\nwant:\n%s", json.String(), wantJSON)
	}
}

func TestTestResultOne(t *testing.T) {
	var text bytes.Buffer
	if err := NewText(&text, &text).TestResult([]string{"only"}, 0, time.Millisecond, []bool{true}, ""); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{" 1 test ran.\n", " 1 test.\n", " only (1 ms)\n"} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("%q lacks %q", text.String(), want)
		}
	}
}
