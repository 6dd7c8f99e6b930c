package sema

import (
	"maps"
	"slices"

	"gtrace/lang/ast"
)

// isConfig says whether name is the config builtin, as `config`,
// `config()` or its stdlib spelling `__builtin_config`.
func isConfig(name string) bool {
	return name == "config" || name == "__builtin_config"
}

// configRecord checks the config builtin e, which stands for a record
// of every setting's value, fields in name order: an integer, a string
// or a bool each, as the script's config block and the environment left
// them.
func (c *checker) configRecord(e ast.Expr) *Type {
	at := ast.At{Sp: e.Span()}
	rec := &ast.Tuple{At: at}
	for _, key := range slices.Sorted(maps.Keys(options)) {
		if key == "cache_user_symbols" { // as bpftrace, which leaves it out
			continue
		}
		var lit ast.Expr
		switch v := options[key].get(&c.opts.Config).(type) {
		case int64:
			lit = &ast.IntLit{At: at, Value: uint64(v)}
		case string:
			lit = &ast.StrLit{At: at, Value: v}
		case bool:
			lit = &ast.BoolLit{At: at, Value: v}
		}
		rec.Names = append(rec.Names, key)
		rec.Elems = append(rec.Elems, lit)
	}
	c.prog.Stands[e] = rec
	return c.expr(rec)
}
