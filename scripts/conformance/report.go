package main

import (
	"fmt"
	"io"
	"strings"
)

// report holds every result of a run.
type report struct {
	tools, cases []result
}

// tally counts the results of one file.
type tally struct {
	passed, ran, skipped int
}

func (t *tally) add(r result) {
	switch r.Status {
	case skipped:
		t.skipped++
	case passed:
		t.passed++
		t.ran++
	default:
		t.ran++
	}
}

// print writes the text report: the tools, the cases per file, the
// failing and the skipped cases with their reasons, then the totals.
func (rep *report) print(w io.Writer, verbose bool) {
	var tools tally
	for _, r := range rep.tools {
		tools.add(r)
	}
	if len(rep.tools) > 0 {
		fmt.Fprintf(w, "== tools: %d/%d passed\n", tools.passed, tools.ran)
		printFailures(w, rep.tools, verbose)
		fmt.Fprintln(w)
	}
	if len(rep.cases) == 0 {
		return
	}

	var files []string
	perFile := map[string]*tally{}
	var total tally
	noNotify, passedByTimeout := 0, 0
	for _, r := range rep.cases {
		if perFile[r.File] == nil {
			perFile[r.File] = &tally{}
			files = append(files, r.File)
		}
		perFile[r.File].add(r)
		total.add(r)
		if r.NoNotify {
			noNotify++
		}
		if r.TimedOut && r.Status == passed {
			passedByTimeout++
		}
	}
	fmt.Fprintln(w, "== runtime cases per file: passed/ran skipped")
	for _, f := range files {
		t := perFile[f]
		fmt.Fprintf(w, "%-20s %4d/%-4d %4d\n", f, t.passed, t.ran, t.skipped)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "== failing cases")
	printFailures(w, rep.cases, verbose)
	fmt.Fprintln(w)
	fmt.Fprintln(w, "== skipped cases")
	for _, r := range rep.cases {
		if r.Status == skipped {
			fmt.Fprintf(w, "%s:%s: %s\n", r.File, r.Name, r.Reason)
		}
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "== totals")
	if len(rep.tools) > 0 {
		fmt.Fprintf(w, "tools:   %d/%d passed\n", tools.passed, tools.ran)
	}
	fmt.Fprintf(w, "runtime: %d/%d passed (%.1f%%), %d failed, %d skipped\n",
		total.passed, total.ran, percent(total.passed, total.ran), total.ran-total.passed, total.skipped)
	if passedByTimeout > 0 {
		fmt.Fprintf(w, "%d passing cases passed once their TIMEOUT had ended the tracer\n", passedByTimeout)
	}
	if noNotify > 0 {
		fmt.Fprintf(w, "%d cases printed no %s line: attach was assumed\n", noNotify, strings.TrimSpace(notifyLine))
	}
}

func printFailures(w io.Writer, results []result, verbose bool) {
	for _, r := range results {
		if r.Status != failed {
			continue
		}
		fmt.Fprintf(w, "%s:%s: %s\n", r.File, r.Name, r.Reason)
		if verbose {
			fmt.Fprintf(w, "\tcommand: %s\n", r.Command)
			for _, l := range strings.Split(strings.TrimRight(r.Output, "\n"), "\n") {
				fmt.Fprintf(w, "\t| %s\n", l)
			}
		}
	}
}

func percent(n, of int) float64 {
	if of == 0 {
		return 0
	}
	return 100 * float64(n) / float64(of)
}
