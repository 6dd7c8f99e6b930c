package kernel

import (
	"fmt"
	"strings"

	"github.com/cilium/ebpf/btf"
)

// CDecl renders a BTF type as a C declaration around declarator decl, the
// way libbpf's btf_dump prints parameter types for bpftrace -lv, e.g.
// "const char * const *" or "void (*)(void *)".
func CDecl(typ btf.Type, decl string) string {
	switch t := typ.(type) {
	case *btf.Pointer:
		return CDecl(t.Target, prependDecl("*", decl))
	case *btf.Const:
		return qualified(t.Type, "const", decl)
	case *btf.Volatile:
		return qualified(t.Type, "volatile", decl)
	case *btf.Restrict:
		return qualified(t.Type, "restrict", decl)
	case *btf.TypeTag:
		return CDecl(t.Type, decl)
	case *btf.Array:
		if strings.HasPrefix(decl, "*") {
			decl = "(" + decl + ")"
		}
		return CDecl(t.Type, fmt.Sprintf("%s[%d]", decl, t.Nelems))
	case *btf.FuncProto:
		var params []string
		for _, p := range t.Params {
			params = append(params, CDecl(p.Type, ""))
		}
		if len(params) == 0 {
			params = []string{"void"}
		}
		return CDecl(t.Return, "("+decl+")("+strings.Join(params, ", ")+")")
	}
	return joinDecl(baseName(typ), decl)
}

// qualified places a qualifier after a pointer it applies to and before
// anything else, matching C's reading order.
func qualified(typ btf.Type, qual, decl string) string {
	if _, ok := typ.(*btf.Pointer); ok {
		return CDecl(typ, prependDecl(qual, decl))
	}
	return qual + " " + CDecl(typ, decl)
}

func prependDecl(token, decl string) string {
	if decl == "" || (token == "*" && strings.ContainsAny(decl[:1], "*[(")) {
		return token + decl
	}
	return token + " " + decl
}

func joinDecl(base, decl string) string {
	if decl == "" {
		return base
	}
	return base + " " + decl
}

func baseName(typ btf.Type) string {
	switch t := typ.(type) {
	case *btf.Void:
		return "void"
	case *btf.Struct:
		return "struct " + t.Name
	case *btf.Union:
		return "union " + t.Name
	case *btf.Enum:
		return "enum " + t.Name
	case *btf.Fwd:
		if t.Kind == btf.FwdUnion {
			return "union " + t.Name
		}
		return "struct " + t.Name
	}
	return typ.TypeName()
}
