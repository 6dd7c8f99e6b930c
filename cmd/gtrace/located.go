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
	var ae *probe.AttachError
	switch {
	case errors.As(err, &l):
	case errors.As(err, &ae) && attachSpan(info, ae.Probe) != nil:
		l = diag.List{{Span: *attachSpan(info, ae.Probe), Msg: err.Error()}}
	default:
		return err
	}
	diag.Render(stderr, file, pre.Errors(l))
	return exitCode(1)
}

// attachSpan is the place of the attach point of the probe named name.
func attachSpan(info *sema.Info, name string) *token.Span {
	for _, p := range info.Progs {
		if p.Probe.Name == name && p.Attach != nil {
			sp := p.Attach.Span()
			return &sp
		}
	}
	return nil
}
