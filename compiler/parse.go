package compiler

import (
	"strings"

	"gtrace/codegen"
	"gtrace/lang/ast"
	"gtrace/lang/cpp"
	"gtrace/lang/diag"
	"gtrace/lang/macro"
	"gtrace/lang/parser"
	"gtrace/lang/token"
	"gtrace/output"
)

// parse runs the front of the pipeline on p.File: the preprocessor, the
// parser and macro expansion.
func (p *Program) parse(o *Options) (*ast.Program, error) {
	pre, errs := cpp.Preprocess(p.File, &cpp.Options{IncludeDirs: o.IncludeDirs, Includes: o.Includes})
	if errs.HasErrors() {
		return nil, &Error{File: p.File, Diags: errs}
	}
	p.Source = pre
	tree, errs := parser.ParseFile(pre.File)
	if errs.HasErrors() {
		return nil, p.located(errs)
	}
	errs = macro.Expand(tree)
	if errs.HasErrors() {
		return nil, p.located(errs)
	}
	p.expandWarnings = errs
	return tree, nil
}

// AttachPoints parses src and returns its attach points as written, for
// -l to list the probes of a script, as bpftrace does without checking
// the script.
func AttachPoints(src []byte, opts *Options) ([]string, error) {
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
	var aps []string
	for _, pr := range tree.Probes {
		for _, ap := range pr.Attach {
			aps = append(aps, ap.Text)
		}
	}
	return aps, nil
}

// locateHelperError renders a -k warning's place in the script once,
// for the runtime to print with its message each time the helper fails.
func (p *Program) locateHelperError(ev *codegen.Event) {
	located := p.located(diag.List{{Span: ev.At, Msg: output.MessageMark, Warning: true}})
	var b strings.Builder
	located.Render(&b)
	ev.Located = b.String()
	d := located.Diags[0]
	f := located.File
	if d.File != nil {
		f = d.File
	}
	pos := f.Position(d.Span.Start)
	ev.Loc = output.Location{File: f.Name, Line: pos.Line, Col: pos.Column}
}
