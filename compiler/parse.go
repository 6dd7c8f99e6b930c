package compiler

import (
	"gtrace/lang/ast"
	"gtrace/lang/cpp"
	"gtrace/lang/macro"
	"gtrace/lang/parser"
	"gtrace/lang/token"
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
	if errs := macro.Expand(tree); errs.HasErrors() {
		return nil, p.located(errs)
	}
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
