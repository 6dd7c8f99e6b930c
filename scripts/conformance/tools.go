package main

import (
	"fmt"
	"path/filepath"
	"strings"
	"time"
)

// toolTimeout bounds one tool's dry run.
const toolTimeout = time.Minute

// runTools dry-runs every tools/*.bt of the checkout: each must compile
// and load, exiting 0.
func runTools(tracer, src string) []result {
	var results []result
	for _, tool := range globs(filepath.Join(src, "tools", "*.bt")) {
		results = append(results, runTool(tracer, tool))
	}
	return results
}

func runTool(tracer, tool string) result {
	res := result{File: "tools", Name: filepath.Base(tool), Command: tracer + " --dry-run " + tool}
	p, err := startProc([]string{tracer, "--dry-run", tool}, filepath.Dir(tool), nil)
	if err != nil {
		res.Status, res.Reason = failed, err.Error()
		return res
	}
	p.reap()
	select {
	case <-p.exited:
	case <-time.After(toolTimeout):
		res.Reason = fmt.Sprintf("timeout (%v)", toolTimeout)
	}
	res.Output = p.finish(0)
	switch {
	case res.Reason != "":
		res.Status = failed
	case p.state.Success():
		res.Status = passed
	default:
		res.Status = failed
		res.Reason = errorLine(res.Output)
		if res.Reason == "" {
			res.Reason = fmt.Sprintf("exit code %d: %s", exitCode(p.state), firstLine(strings.TrimSpace(res.Output)))
		}
	}
	return res
}
