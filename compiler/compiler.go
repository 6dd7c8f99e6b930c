package compiler

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"gtrace/codegen"
	"gtrace/lang/ast"
	"gtrace/lang/cpp"
	"gtrace/lang/diag"
	"gtrace/lang/token"
	"gtrace/probe"
	"gtrace/sema"
)

// Options control a compile.
type Options struct {
	// Name is the script's file name in messages; "stdin" when empty.
	Name string
	// IncludeDirs are searched by #include, as -I gives them.
	IncludeDirs []string
	// Includes are included before the script, as --include gives them.
	Includes []string
	// Check holds the checker's settings and kernel inputs: the command
	// line's config, the environment to read BPFTRACE_* settings from,
	// and fakes of the kernel for tests. The zero value checks against
	// the running kernel with bpftrace's defaults.
	Check sema.Options
	// Codegen holds the code generator's options; Compile sets its File.
	Codegen codegen.Options
	// DumpAST, when set, receives the tree after parsing (-d ast), and
	// DumpCodegen each program's instructions (-d codegen).
	DumpAST, DumpCodegen io.Writer
}

// Program is a compiled script.
type Program struct {
	// File is the script as written, and Source the script after the
	// preprocessor, which maps positions back to File and its headers.
	File   *token.File
	Source *cpp.Result
	Info   *sema.Info
	Output *codegen.Output
	// Warnings are the macro expander's and the checker's warnings,
	// located.
	Warnings *Error
	// expandWarnings are the macro expander's, kept until the checker
	// adds its own.
	expandWarnings diag.List
}

// Error is a list of located diagnostics, with the file they point into.
type Error struct {
	File  *token.File
	Diags diag.List
}

func (e *Error) Error() string { return e.Diags.Error() }

// Render prints the diagnostics as bpftrace does: position, message, the
// source line and a ~~~ underline.
func (e *Error) Render(w io.Writer) { diag.Render(w, e.File, e.Diags) }

// Compile runs the pipeline on src. A failure in the script comes back as
// an *Error, located; anything else, such as a missing kernel feature, as
// a plain error.
func Compile(src []byte, opts *Options) (*Program, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.Name == "" {
		o.Name = "stdin"
	}
	p := &Program{File: token.NewFile(o.Name, src)}
	tree, err := p.parse(&o)
	if err != nil {
		return nil, err
	}
	pre := p.Source
	// bpftrace prints the tree after each of its passes; gtrace's checker
	// leaves the tree as the parser made it, so it is printed once.
	if o.DumpAST != nil {
		fmt.Fprint(o.DumpAST, "AST after: parse\n-------------------\n")
		ast.Print(o.DumpAST, tree, pre.File.Src)
		fmt.Fprintln(o.DumpAST)
	}
	info, errs := sema.Check(tree, &o.Check)
	if errs.HasErrors() {
		return nil, p.located(errs)
	}
	if errs = append(p.expandWarnings, errs...); len(errs) > 0 {
		p.Warnings = p.located(errs)
	}
	p.Info = info
	o.Codegen.File = pre.File
	out, err := codegen.Compile(info, &o.Codegen)
	if err != nil {
		return nil, p.Locate(err)
	}
	p.Output = out
	for _, ev := range out.Events {
		if ev.Kind == codegen.EvErrorf || ev.Kind == codegen.EvWarnf {
			ev.Where = p.message(ev)
		}
		if ev.Kind == codegen.EvWarning {
			// Rendered once here, with its place in the script, to be
			// printed as it is each time the program warns.
			var b strings.Builder
			p.located(diag.List{{Span: ev.At, Msg: ev.Format, Warning: !ev.Error}}).Render(&b)
			ev.Format = b.String()
		}
		if ev.Kind == codegen.EvHelperError {
			p.locateHelperError(ev)
		}
	}
	if o.DumpCodegen != nil {
		fmt.Fprint(o.DumpCodegen, "BPF instructions\n----------------\n\n")
		for _, cp := range out.Progs {
			fmt.Fprintf(o.DumpCodegen, "%s:\n%v\n", cp.Prog.Probe.Name, out.Spec.Programs[cp.Name].Instructions)
		}
	}
	return p, nil
}

// located maps diagnostics in the preprocessed text back to the script
// and its headers.
func (p *Program) located(l diag.List) *Error {
	return &Error{File: p.File, Diags: p.Source.Errors(l)}
}

// Locate returns err as an *Error at its place in the script when it has
// one: errors of code generation and loading carry it, and a probe that
// failed to attach is found at its attach point, its cause said after
// it as bpftrace says it. Other errors come back
// as they are.
func (p *Program) Locate(err error) error {
	var l diag.List
	if errors.As(err, &l) {
		return p.located(l)
	}
	var ae *probe.AttachError
	if !errors.As(err, &ae) || p.Info == nil {
		return err
	}
	for _, pr := range p.Info.Progs {
		if pr.Probe.Name == ae.Probe && pr.Attach != nil {
			located := p.located(diag.List{{Span: pr.Attach.Span(), Msg: ae.Unable()}})
			located.Diags[0].Notes = []*diag.Error{{Span: token.Span{Start: token.NoPos}, Msg: ae.Err.Error()}}
			return located
		}
	}
	return err
}
