package output

import (
	"strconv"
	"strings"
	"time"
)

// The colours of bpftrace's test report, written whatever the output is.
const (
	testGreen = "\033[32m"
	testRed   = "\033[31m"
	testReset = "\033[0m"
)

// TestResult prints the result of test index of names as bpftrace's
// report: a header before the first, the test's RUN line, the output of
// a failed test, its OK or FAILED line with its run time, and after the
// last a summary listing the failed tests.
func (t *Text) TestResult(names []string, index int, took time.Duration, passed []bool, out string) error {
	var b strings.Builder
	line := func(colour, tag, text string) {
		b.WriteString(colour + tag + testReset + " " + text + "\n")
	}
	if index == 0 {
		line(testGreen, "[==========]", "Running "+strconv.Itoa(len(names))+" tests.")
	}
	line(testGreen, "[ RUN      ]", names[index])
	if passed[index] {
		line(testGreen, "[       OK ]", names[index]+" ("+durationText(took)+")")
	} else {
		for _, l := range strings.Split(out, "\n") {
			if l != "" {
				b.WriteString(l + "\n")
			}
		}
		line(testRed, "[  FAILED  ]", names[index]+" ("+durationText(took)+")")
	}
	if index == len(names)-1 {
		failed := 0
		for _, p := range passed {
			if !p {
				failed++
			}
		}
		line(testGreen, "[==========]", testCount(len(names))+" ran.")
		line(testGreen, "[  PASSED  ]", testCount(len(names)-failed)+".")
		if failed > 0 {
			line(testRed, "[  FAILED  ]", testCount(failed)+", listed below:")
			for i, p := range passed {
				if !p {
					line(testRed, "[  FAILED  ]", names[i])
				}
			}
		}
	}
	return write(t.out, b.String())
}

// testCount is "1 test" or "N tests".
func testCount(n int) string {
	if n == 1 {
		return "1 test"
	}
	return strconv.Itoa(n) + " tests"
}

// durationText is d in the largest of s, ms, us and ns that is at most
// d, whole units, as "12 us".
func durationText(d time.Duration) string {
	units := []struct {
		name string
		size time.Duration
	}{{"s", time.Second}, {"ms", time.Millisecond}, {"us", time.Microsecond}}
	for _, u := range units {
		if d >= u.size {
			return strconv.FormatInt(int64(d/u.size), 10) + " " + u.name
		}
	}
	return strconv.FormatInt(int64(d), 10) + " ns"
}

// TestResult prints one test's result as a test_result line: its run
// time in nanoseconds, whether it passed, and what it printed.
func (j *JSON) TestResult(names []string, index int, took time.Duration, passed []bool, out string) error {
	var b strings.Builder
	b.WriteString(`{"type": "test_result", "data": {`)
	writeJSONString(&b, names[index])
	b.WriteString(`: {"duration": `)
	writeJSONInt(&b, took.Nanoseconds())
	b.WriteString(`, "passed": ` + strconv.FormatBool(passed[index]) + `, "output": `)
	writeJSONString(&b, out)
	b.WriteString("}}}\n")
	return write(j.out, b.String())
}
