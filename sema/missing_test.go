package sema

import (
	"strings"
	"testing"

	"gtrace/lang/parser"
	"gtrace/lang/token"
	"gtrace/probe"
)

// missingExpand stands in for probe.Parse: "uprobe:bin:gone" names a
// function bin lacks, "tracepoint:a:gone" a tracepoint the kernel lacks,
// "uprobe:bin:stub" a valid attach point with no probe; anything else is
// one probe.
func missingExpand(text string) ([]probe.Probe, error) {
	if strings.HasSuffix(text, ":stub") {
		return nil, &probe.EmptyError{Reason: text + " defines no functions"}
	}
	if strings.HasSuffix(text, ":gone") {
		provider, target, _ := strings.Cut(text, ":")
		return nil, &probe.MissingError{Provider: provider, Target: target, Reason: target + " is missing"}
	}
	return []probe.Probe{{Kind: probe.Tracepoint, Name: text}}, nil
}

// TestMissingProbes checks the missing_probes config on attach points
// that name what does not exist: an error by default, a warning in
// bpftrace v0.26's words that drops the attach point, or nothing; and
// that only the attach points that exist become programs.
func TestMissingProbes(t *testing.T) {
	tests := []struct {
		src, mode string
		progs     []string // the programs made, by attach point
		diags     []string // "E: msg" for errors, "W: msg" for warnings
	}{
		{"uprobe:bin:gone, uprobe:bin:f { }", "error", nil,
			[]string{"E: No matches for uprobe bin:gone."}},
		{"uprobe:bin:gone, uprobe:bin:f { }", "warn", []string{"uprobe:bin:f"},
			[]string{"W: No matches for uprobe bin:gone. Skipping."}},
		{"uprobe:bin:gone, uprobe:bin:f { }", "ignore", []string{"uprobe:bin:f"}, nil},
		{"uprobe:bin:f, tracepoint:a:gone, uprobe:bin:g { }", "warn", []string{"uprobe:bin:f", "uprobe:bin:g"},
			[]string{"W: No matches for tracepoint a:gone. Skipping."}},
		{"uprobe:bin:gone, uretprobe:bin:gone { } BEGIN { }", "warn", []string{"BEGIN"},
			// In position order: the probe's warning is at its first attach point.
			[]string{"W: No matches for uprobe bin:gone. Skipping.",
				"W: Probe has no valid attach points. It is being removed which may cause issues with program behavior.",
				"W: No matches for uretprobe bin:gone. Skipping."}},
		{"uprobe:bin:gone { } BEGIN { }", "ignore", []string{"BEGIN"}, nil},
		{"uprobe:bin:gone { } BEGIN { }", "error", nil, []string{"E: No matches for uprobe bin:gone."}},
		// A valid attach point without probes next to one with a probe
		// leaves the probe valid, whatever the order.
		{"uprobe:bin:stub, uprobe:bin:f { }", "error", []string{"uprobe:bin:f"},
			[]string{"W: uprobe:bin:stub defines no functions"}},
		{"uprobe:bin:f, uprobe:bin:stub { }", "error", []string{"uprobe:bin:f"},
			[]string{"W: uprobe:bin:stub defines no functions"}},
		{"uprobe:bin:stub { }", "error", nil, []string{"W: uprobe:bin:stub defines no functions"}},
	}
	for _, tt := range tests {
		prog, errs := parser.ParseFile(token.NewFile("stdin", []byte(tt.src)))
		if errs.HasErrors() {
			t.Fatalf("parse %q: %v", tt.src, errs)
		}
		cfg := DefaultConfig()
		cfg.MissingProbes = tt.mode
		opts := fakeOptions(cfg)
		opts.Expand = missingExpand
		info, errs := Check(prog, opts)
		var diags []string
		for _, e := range errs {
			kind := "E: "
			if e.Warning {
				kind = "W: "
			}
			diags = append(diags, kind+e.Msg)
		}
		if strings.Join(diags, "\n") != strings.Join(tt.diags, "\n") {
			t.Errorf("%s with %s: diagnostics\n%s\nwant\n%s", tt.src, tt.mode, strings.Join(diags, "\n"), strings.Join(tt.diags, "\n"))
		}
		if errs.HasErrors() {
			continue
		}
		var progs []string
		for _, p := range info.Progs {
			progs = append(progs, p.Probe.Name)
		}
		if strings.Join(progs, " ") != strings.Join(tt.progs, " ") {
			t.Errorf("%s with %s: programs %q, want %q", tt.src, tt.mode, progs, tt.progs)
		}
	}
}
