package harness

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// AttachingLine is the "Attaching N probes..." line that bpftrace 0.17
// prints on stdout before the program's output. gtrace, like current
// bpftrace, prints AttachedLine on stderr instead.
var AttachingLine = regexp.MustCompile(`(?m)^Attaching \d+ probes?\.\.\.\n`)

// AttachedLine is the "Attached N probes" line that gtrace prints on
// stderr once its probes are attached.
var AttachedLine = regexp.MustCompile(`(?m)^Attached \d+ probes?\n`)

// StripAttaching removes bpftrace 0.17's attaching line, which is not
// program output, from its stdout.
func StripAttaching(stdout string) string {
	return AttachingLine.ReplaceAllString(stdout, "")
}

// StripAttached removes gtrace's attached line from its stderr.
func StripAttached(stderr string) string {
	return AttachedLine.ReplaceAllString(stderr, "")
}

// AttachCount is the number of probes that the attaching line of
// bpftrace 0.17's stdout, or the attached line of gtrace's stderr,
// reports; -1 if there is none.
func AttachCount(out string) int {
	m := attachCount.FindStringSubmatch(out)
	if m == nil {
		return -1
	}
	n, _ := strconv.Atoi(m[1])
	return n
}

var attachCount = regexp.MustCompile(`(?m)^Attach(?:ing|ed) (\d+) probes?`)

// MapOutput is stdout without the attaching line and the blank lines
// printed before the maps at exit and after the last histogram, so
// expectations can list just the lines that carry values.
func MapOutput(stdout string) string {
	s := strings.Trim(StripAttaching(stdout), "\n")
	if s == "" {
		return ""
	}
	return s + "\n"
}

// HistRow formats one histogram row the way bpftrace does: a 16-wide
// label, an 8-wide count and a 52-wide bar scaled to the largest count.
func HistRow(label string, count, max int) string {
	bar := strings.Repeat("@", int(float32(count)/float32(max)*52))
	return fmt.Sprintf("%-16s%8d |%-52s|\n", label, count, bar)
}

// Patterns for the bpftrace 0.17 text that gtrace prints differently.
var (
	histHeader = regexp.MustCompile(`(?m)^(@\w*(\[.*\])?): $`)
	statsValue = regexp.MustCompile(`(?m)^(@.*): count (-?\d+), average (-?\d+), total (-?\d+)$`)
	lhistRange = regexp.MustCompile(`(?m)^\[(-?\d+), (-?\d+)\)( *)`)
)

// Normalise maps output to the form gtrace prints (bpftrace v0.26), undoing
// only the differences between bpftrace 0.17 and v0.26 documented in
// gtrace's output/doc.go:
//   - the "Attaching N probes..." line is dropped (it is not map output);
//   - "@h: " before a histogram loses its trailing space;
//   - stats print as "{ .count = N, .average = A, .total = T }", not
//     "count N, average A, total T";
//   - avg and stats maps (named in statsMaps) have no empty line after them;
//   - lhist buckets holding a single value print as "[5]", not "[5, 6)".
//
// gtrace output passes through unchanged, as none of these patterns occur
// in it.
func Normalise(out string, statsMaps []string) string {
	out = StripAttaching(out)
	out = histHeader.ReplaceAllString(out, "$1:")
	out = statsValue.ReplaceAllString(out, "$1: { .count = $2, .average = $3, .total = $4 }")
	out = lhistRange.ReplaceAllStringFunc(out, func(s string) string {
		m := lhistRange.FindStringSubmatch(s)
		lo, _ := strconv.Atoi(m[1])
		hi, _ := strconv.Atoi(m[2])
		if hi != lo+1 {
			return s
		}
		// Keep the row's width: the label column is padded to 16.
		label := "[" + m[1] + "]"
		return label + strings.Repeat(" ", len(s)-len(label))
	})
	lines := strings.Split(out, "\n")
	var kept []string
	for i, l := range lines {
		if l == "" && i > 0 && isMapLine(lines[i-1], statsMaps) {
			continue
		}
		kept = append(kept, l)
	}
	return strings.Join(kept, "\n")
}

// isMapLine tells whether line is an entry of one of the named maps.
func isMapLine(line string, names []string) bool {
	for _, n := range names {
		if strings.HasPrefix(line, n+":") || strings.HasPrefix(line, n+"[") {
			return true
		}
	}
	return false
}

// FirstDifference returns the first line at which bpftrace's lines and
// gtrace's differ, numbered from 1, and each side's line there ("" past
// its end); n is 0 when they are the same.
func FirstDifference(bpftrace, gtrace []string) (n int, b, g string) {
	for i := 0; i < len(bpftrace) || i < len(gtrace); i++ {
		b, g = "", ""
		if i < len(bpftrace) {
			b = bpftrace[i]
		}
		if i < len(gtrace) {
			g = gtrace[i]
		}
		if b != g {
			return i + 1, b, g
		}
	}
	return 0, "", ""
}
