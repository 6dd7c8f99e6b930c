// Package compiler assembles gtrace's pipeline in one place: the
// preprocessor, the parser, the checker with the script's config, and code
// generation, with the -d dumps between them. The command line, the
// benchmarks and the tests all compile through Compile, so that each
// honours the same config and reports the same located errors.
//
//	prog, err := compiler.Compile(src, &compiler.Options{Name: "x.bt"})
//	var cerr *compiler.Error
//	if errors.As(err, &cerr) {
//		cerr.Render(os.Stderr) // FILE:LINE:COL-COL: ERROR: ...
//	}
package compiler
