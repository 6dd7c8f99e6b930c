package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// check tells whether output meets e, and if not, why, in one line.
// Files named by EXPECT_FILE and EXPECT_JSON are read relative to the
// working directory, as the engine reads them. localizeTS is the case's
// LOCALIZE_TIMESTAMPS, or -1.
func check(e expect, output string, localizeTS int64) (bool, string) {
	switch e.mode {
	case expectText:
		if lineRegexp(e.text).MatchString(output) {
			return true, ""
		}
		return false, "expected line not found: " + firstLine(e.text)
	case expectTextNone:
		if !lineRegexp(e.text).MatchString(output) {
			return true, ""
		}
		return false, "unexpected line found: " + firstLine(e.text)
	case expectRegex, expectRegexNone:
		return checkRegex(e, output)
	case expectFile:
		return checkFile(e.text, output, localizeTS)
	default:
		return checkJSON(e.text, output)
	}
}

// lineRegexp matches text as whole lines, with any white space around.
func lineRegexp(text string) *regexp.Regexp {
	return regexp.MustCompile(`(?m)^\s*` + regexp.QuoteMeta(text) + `\s*$`)
}

// bigRepeat is a single character repeated more than the 1000 times
// Go's regexp allows, as in X{5555}.
var bigRepeat = regexp.MustCompile(`([\w/])\{(\d{4,})\}`)

// splitRepeats rewrites each X{N} with N above 1000 as X{1000} N/1000
// times in a row, then X{N%1000}, which Go's regexp compiles: it refuses
// nested repeats above 1000 too.
func splitRepeats(re string) string {
	return bigRepeat.ReplaceAllStringFunc(re, func(m string) string {
		sub := bigRepeat.FindStringSubmatch(m)
		n, _ := strconv.Atoi(sub[2])
		return strings.Repeat(sub[1]+"{1000}", n/1000) + fmt.Sprintf("%s{%d}", sub[1], n%1000)
	})
}

func checkRegex(e expect, output string) (bool, string) {
	re, err := regexp.Compile("(?m)" + splitRepeats(e.text))
	if err != nil {
		return false, fmt.Sprintf("regex %q: %v", e.text, err)
	}
	found := re.MatchString(output)
	switch {
	case e.mode == expectRegex && !found:
		return false, "expected regex not matched: " + firstLine(e.text)
	case e.mode == expectRegexNone && found:
		return false, "unexpected regex matched: " + firstLine(e.text)
	}
	return true, ""
}

// checkFile compares the output with a file, both trimmed of white space
// at either end. With LOCALIZE_TIMESTAMPS the file is a strftime format
// for that time in the local zone.
func checkFile(path, output string, localizeTS int64) (bool, string) {
	b, err := os.ReadFile(path)
	if err != nil {
		return false, err.Error()
	}
	want := strings.TrimSpace(string(b))
	if localizeTS >= 0 {
		want = localize(want, time.Unix(localizeTS, 0))
	}
	got := strings.TrimSpace(output)
	if got == want {
		return true, ""
	}
	return false, fmt.Sprintf("output differs from %s: %s", path, firstDifference(want, got))
}

// localize expands the strftime conversions the expected files use.
func localize(format string, t time.Time) string {
	return strings.NewReplacer(
		"%%", "%",
		"%H", fmt.Sprintf("%02d", t.Hour()),
		"%M", fmt.Sprintf("%02d", t.Minute()),
		"%S", fmt.Sprintf("%02d", t.Second()),
	).Replace(format)
}

// firstDifference names the first line where got differs from want.
func firstDifference(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := 0; i < max(len(w), len(g)); i++ {
		wl, gl := "<none>", "<none>"
		if i < len(w) {
			wl = w[i]
		}
		if i < len(g) {
			gl = g[i]
		}
		if wl != gl {
			return fmt.Sprintf("line %d: want %q, got %q", i+1, wl, gl)
		}
	}
	return "same lines"
}

// checkJSON compares the output with a JSON file, by value. A .ndjson
// file holds one document per line, compared line by line; otherwise the
// output must be one line of JSON.
func checkJSON(path, output string) (bool, string) {
	b, err := os.ReadFile(path)
	if err != nil {
		return false, err.Error()
	}
	got := strings.Split(strings.TrimSpace(output), "\n")
	want := []string{string(b)}
	if filepath.Ext(path) == ".ndjson" {
		want = strings.Split(strings.TrimSpace(string(b)), "\n")
	}
	if len(got) != len(want) {
		return false, fmt.Sprintf("%s: want %d lines of JSON, got %d", path, len(want), len(got))
	}
	for i := range want {
		if ok, why := sameJSON(want[i], got[i]); !ok {
			return false, fmt.Sprintf("%s: line %d: %s", path, i+1, why)
		}
	}
	return true, ""
}

// sameJSON compares two JSON documents by value; numbers compare by
// their value, so 1 and 1.0 are the same.
func sameJSON(want, got string) (bool, string) {
	w, err := decodeJSON(want)
	if err != nil {
		return false, "expected JSON: " + err.Error()
	}
	g, err := decodeJSON(got)
	if err != nil {
		return false, fmt.Sprintf("output is not JSON: %v: %s", err, firstLine(got))
	}
	if !reflect.DeepEqual(w, g) {
		return false, "JSON differs: got " + firstLine(got)
	}
	return true, ""
}

// jsonNumber is a number's exact value, kept apart from strings.
type jsonNumber string

func decodeJSON(s string) (any, error) {
	d := json.NewDecoder(bytes.NewReader([]byte(s)))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, err
	}
	if d.More() {
		return nil, fmt.Errorf("more than one JSON value")
	}
	return normalizeNumbers(v), nil
}

// normalizeNumbers turns every json.Number into an exact rational, so
// that equal values compare equal whatever their spelling.
func normalizeNumbers(v any) any {
	switch v := v.(type) {
	case json.Number:
		r, ok := new(big.Rat).SetString(v.String())
		if !ok {
			return jsonNumber(v.String())
		}
		return jsonNumber(r.RatString())
	case []any:
		for i := range v {
			v[i] = normalizeNumbers(v[i])
		}
	case map[string]any:
		for k := range v {
			v[k] = normalizeNumbers(v[k])
		}
	}
	return v
}

func firstLine(s string) string {
	l, _, _ := strings.Cut(s, "\n")
	if len(l) > 160 {
		l = l[:160] + "..."
	}
	return l
}
