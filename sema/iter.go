package sema

import "gtrace/lang/ast"

// iterCtx is the type of ctx in an iterator's probe: a pointer to the
// iterator's struct bpf_iter__NAME, whose fields (ctx.task, ctx.file,
// ctx.vma) are the object of each run.
func (c *checker) iterCtx(e *ast.Ident) *Type {
	t, err := c.lookupType("struct bpf_iter__" + c.prog.Probe.Event)
	if err != nil {
		c.errorf(e, "ctx of %s is a struct bpf_iter__%s, which needs the kernel's BTF: %v", c.prog.Probe.Name, c.prog.Probe.Event, err)
		return nil
	}
	return &Type{Kind: Pointer, Size: 8, BTF: t}
}
