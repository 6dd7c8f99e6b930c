package output

import (
	"strconv"
	"strings"
	"time"
)

// Widths of bpftrace's table of benchmark results: the names' column is
// at least 40 wide, the time's 15.
const (
	benchNameWidth = 40
	benchTimeWidth = 15
)

// BenchResult prints the result of benchmark index of names as a row of
// bpftrace's table, under its header: its name, the mean time of a run
// and the runs that mean is over. The header comes before the first
// result printed, which is the first benchmark's unless that one failed.
func (t *Text) BenchResult(names []string, index int, mean time.Duration, iters uint64) error {
	width := benchNameWidth
	for _, n := range names {
		width = max(width, len(n))
	}
	var b strings.Builder
	if !t.benched {
		t.benched = true
		b.WriteString(padRight("Benchmark", width+1) + padRight("Time(ns)", benchTimeWidth) + "Iterations\n")
		b.WriteString(strings.Repeat("-", width+1+benchTimeWidth+len("Iterations")) + "\n")
	}
	b.WriteString(padRight(names[index], width+1) + padRight(strconv.FormatInt(mean.Nanoseconds(), 10), benchTimeWidth) +
		strconv.FormatUint(iters, 10) + "\n")
	return write(t.out, b.String())
}

// BenchResult prints one benchmark's result as a benchmark_result line.
func (j *JSON) BenchResult(names []string, index int, mean time.Duration, iters uint64) error {
	var b strings.Builder
	b.WriteString(`{"type": "benchmark_result", "data": {`)
	writeJSONString(&b, names[index])
	b.WriteString(`: {"average": `)
	writeJSONInt(&b, mean.Nanoseconds())
	b.WriteString(`, "iters": `)
	writeJSONUint(&b, iters)
	b.WriteString("}}}\n")
	return write(j.out, b.String())
}
