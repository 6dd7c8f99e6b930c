package tools

import (
	"fmt"
	"strconv"

	"gtrace/lang/ast"
	"gtrace/lang/parser"
	"gtrace/lang/token"
)

// Option is a program option a tool reads with getopt(name, default,
// description).
type Option struct {
	Name        string
	Description string
	// Value names the option's value in usage, "" for a switch: a
	// getopt() with no default, or a boolean one.
	Value string
}

// options finds the getopt() calls of a tool's script: each option once,
// in the order the script first reads them, each with a description.
func options(name string, src []byte) ([]Option, error) {
	prog, errs := parser.ParseFile(token.NewFile(name+".bt", src))
	if errs.HasErrors() {
		return nil, fmt.Errorf("%v", errs)
	}
	var opts []Option
	seen := map[string]bool{}
	var err error
	ast.Inspect(prog, func(n ast.Node) bool {
		call, ok := n.(*ast.Call)
		if !ok || call.Name != "getopt" || len(call.Args) == 0 || err != nil {
			return true
		}
		lit, ok := call.Args[0].(*ast.StrLit)
		if !ok {
			err = fmt.Errorf("getopt() names its option with a string literal")
			return true
		}
		if seen[lit.Value] {
			return true
		}
		seen[lit.Value] = true
		o := Option{Name: lit.Value}
		if len(call.Args) > 1 {
			o.Value = valueName(name, lit.Value, call.Args[1])
		}
		if len(call.Args) > 2 {
			if d, ok := call.Args[2].(*ast.StrLit); ok {
				o.Description = d.Value
			}
		}
		if o.Description == "" {
			err = fmt.Errorf("option %s has no description: getopt(%q, default, \"description\")", o.Name, o.Name)
		}
		opts = append(opts, o)
		return true
	})
	return opts, err
}

// valueName is how the usage of tool names the value of option name
// with default def: a flag's own value name where a flag maps onto the
// option, else the default's kind.
func valueName(tool, name string, def ast.Expr) string {
	switch def.(type) {
	case *ast.BoolLit:
		return ""
	}
	for _, f := range flagsFor(tool) {
		if f.Option == name && f.Value != "" {
			return f.Value
		}
	}
	if _, ok := def.(*ast.StrLit); ok {
		return "STRING"
	}
	return "N"
}

// option finds the tool's option called name.
func (t *Tool) option(name string) (Option, bool) {
	for _, o := range t.Options {
		if o.Name == name {
			return o, true
		}
	}
	return Option{}, false
}

// isCount says whether s is a positive decimal count, as INTERVAL and
// COUNT must be.
func isCount(s string) bool {
	n, err := strconv.ParseUint(s, 10, 32)
	return err == nil && n > 0
}
