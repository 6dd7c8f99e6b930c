package main

import (
	"errors"
	"io"

	"gtrace/lang/cpp"
	"gtrace/lang/diag"
	"gtrace/lang/token"
)

// locatedError prints err at its place in the script when it carries one, as
// errors of code generation and loading do, and returns the error trace
// should end with.
func locatedError(stderr io.Writer, file *token.File, pre *cpp.Result, err error) error {
	var l diag.List
	if !errors.As(err, &l) {
		return err
	}
	diag.Render(stderr, file, pre.Errors(l))
	return exitCode(1)
}
