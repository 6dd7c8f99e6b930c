package sema

import "gtrace/lang/ast"

// isConfig says whether name is the config builtin, as `config`,
// `config()` or its stdlib spelling `__builtin_config`.
func isConfig(name string) bool {
	return name == "config" || name == "__builtin_config"
}

// configFields are the fields of the config record, in bpftrace's order:
// the bools, the integers, then the strings. cache_user_symbols is not
// one, as in bpftrace.
var configFields = []string{
	"cpp_demangle", "lazy_symbolication", "print_maps_on_exit", "use_blazesym", "show_debug_info",
	"log_size", "max_bpf_progs", "max_cat_bytes", "max_map_keys", "max_probes", "max_strlen",
	"on_stack_limit", "perf_rb_pages",
	"str_trunc_trailer", "unstable_import_statement", "unstable_tseries", "unstable_typeinfo",
	"unstable_dw_ustack", "missing_probes", "stack_mode", "license",
}

// configRecord checks the config builtin e, which stands for a record
// of every setting's value: an integer, a string or a bool each, as the
// script's config block and the environment left them.
func (c *checker) configRecord(e ast.Expr) *Type {
	at := ast.At{Sp: e.Span()}
	rec := &ast.Tuple{At: at}
	for _, key := range configFields {
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
