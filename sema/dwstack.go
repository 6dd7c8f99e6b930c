package sema

import (
	"runtime"

	"gtrace/lang/ast"
)

// dwUstack checks a dw_ustack, of type t as ustack's: an unstable
// feature, for x86-64, which needs a process to read unwind tables of.
func (c *checker) dwUstack(n ast.Node, t *Type) *Type {
	if t == nil {
		return nil
	}
	c.unstable(n, "unstable_dw_ustack", "dw_ustack (DWARF stack unwinding)")
	switch {
	case runtime.GOARCH != "amd64":
		c.errorf(n, "dw_ustack is not available in this build (requires x86_64)")
		return nil
	case t.Format == "build_id":
		c.errorf(n, "dw_ustack: the 'build_id' stack mode is not supported")
		return nil
	case !c.opts.UnwindTarget:
		c.errorf(n, "dw_ustack requires a target process. Use -p, -c, or --dwarf-pid to specify one.")
		return nil
	}
	return t
}
