package main

import (
	"errors"
	"io"

	"gtrace/lang/cpp"
	"gtrace/lang/diag"
	"gtrace/lang/token"
	"gtrace/probe"
	"gtrace/sema"
)

// locatedError prints err at its place in the script when it has one: errors
// of code generation and loading carry it, a probe that failed to attach
// is found at its attach point. It returns the error trace should end
// with.
func locatedError(stderr io.Writer, file *token.File, pre *cpp.Result, info *sema.Info, err error) error {
	var l diag.List
	if !errors.As(err, &l) {
		var ae *probe.AttachError
		if !errors.As(err, &ae) {
			return err
		}
		span, ok := attachSpan(info, ae.Probe)
		if !ok {
			return err
		}
		l = diag.List{{Span: span, Msg: err.Error()}}
	}
	diag.Render(stderr, file, pre.Errors(l))
	return exitCode(1)
}

// attachSpan finds the attach point of the probe named name.
func attachSpan(info *sema.Info, name string) (token.Span, bool) {
	for _, p := range info.Progs {
		if p.Probe.Name == name && p.Attach != nil {
			return p.Attach.Span(), true
		}
	}
	return token.Span{}, false
}
