package sema

import (
	"gtrace/lang/ast"
	"gtrace/lang/token"
)

// The BPF map types a map declaration can ask for, by the names
// bpftrace gives them.
const (
	KindHash          = "hash"
	KindLRUHash       = "lruhash"
	KindPerCPUHash    = "percpuhash"
	KindPerCPULRUHash = "percpulruhash"
)

var mapKinds = map[string]bool{KindHash: true, KindLRUHash: true, KindPerCPUHash: true, KindPerCPULRUHash: true}

// declareMaps records the script's map declarations, `let @a =
// lruhash(100);`, before the probes that use the maps are checked.
func (c *checker) declareMaps(prog *ast.Program) {
	c.decls = map[string]*ast.MapDecl{}
	for _, d := range prog.MapDecls {
		switch {
		case !mapKinds[d.Kind]:
			c.errorf(d, "Invalid bpf map type: %s", d.Kind)
		case c.decls[d.Map.Name] != nil:
			c.errorf(d, "Map %s is already declared", d.Map.Name)
		default:
			c.decls[d.Map.Name] = d
		}
	}
}

// checkDeclared checks that m, declared, can hold values of type t:
// aggregations live in per-CPU maps, other values in maps shared by
// every CPU.
func (c *checker) checkDeclared(m *ast.Map, t *Type) {
	d := c.decls[m.Name]
	if d == nil {
		return
	}
	need := KindHash
	if t.Kind == Agg {
		need = KindPerCPUHash
	}
	if perCPUKind(d.Kind) != (need == KindPerCPUHash) {
		name := token.Span{Start: m.Sp.Start, End: m.Sp.Start + token.Pos(len(m.Name))}
		c.errorAt(name, "Incompatible map types. Type from declaration: %s. Type from value/key type: %s", d.Kind, need)
	}
}

// perCPUKind reports whether maps of the declared kind have a value per
// CPU.
func perCPUKind(kind string) bool {
	return kind == KindPerCPUHash || kind == KindPerCPULRUHash
}

// applyDecls gives the declared maps their kind and size, and warns of
// declared maps that no probe uses.
func (c *checker) applyDecls(prog *ast.Program) {
	for _, d := range prog.MapDecls {
		if c.decls[d.Map.Name] != d {
			continue
		}
		mi := c.info.Maps[d.Map.Name]
		if mi == nil {
			c.errs.Warn(d.Span(), "Unused map: %s", d.Map.Name)
			continue
		}
		mi.Kind, mi.MaxEntries = d.Kind, int(d.MaxEntries)
	}
}
