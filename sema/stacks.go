package sema

import (
	"fmt"
	"slices"
	"strings"

	"gtrace/lang/ast"
	"gtrace/lang/builtin"
)

// stackModes are the ways a stack prints, as bpftrace names them.
var stackModes = []string{"bpftrace", "perf", "raw", "build_id"}

// maxStackLimit bounds a stack's frame limit, as in bpftrace; the kernel
// keeps at most perf_event_max_stack frames of it.
const maxStackLimit = 1024

// stackCall checks kstack(mode, limit) and ustack(mode, limit), both
// arguments optional.
func (c *checker) stackCall(call *ast.Call, f Func) *Type {
	t := &Type{Kind: KStack, Size: 8}
	if f == FUstack || f == FDwUstack {
		t = &Type{Kind: UStack, Size: 16}
	} else if c.prog.Probe.Fused != nil {
		t.Trim = true
	}
	for i, a := range call.Args {
		if id, ok := a.(*ast.Ident); ok && i == 0 {
			if !slices.Contains(stackModes, id.Name) {
				c.errorf(a, "%s(): unknown stack mode %s: want %s", call.Name, id.Name, strings.Join(stackModes, ", "))
				return nil
			}
			c.prog.Types[a] = VoidT
			t.Format = id.Name
			continue
		}
		n, ok := c.constInt(a)
		if !ok || n < 1 {
			c.errorf(a, "%s(): the number of frames must be a constant from 1 to %d", call.Name, maxStackLimit)
			return nil
		}
		if n > maxStackLimit {
			c.errorf(call, "%s([int limit]): limit shouldn't exceed %d, %d given", call.Name, maxStackLimit, n)
			return nil
		}
		c.expr(a)
		t.Len = int(n)
	}
	if t.Format == "" {
		t.Format = c.opts.Config.StackMode
	}
	if t.Format == "build_id" && t.Kind == KStack {
		c.errorf(call, "'build_id' stack mode can only be used for ustack")
		return nil
	}
	return t
}

// stackBuiltin types kstack and ustack written without a call. Under
// stack_mode = build_id a ustack holds build ids, and a kstack, which
// has none, prints raw, as in bpftrace.
func (c *checker) stackBuiltin(e *ast.Ident, b builtin.Var) *Type {
	mode := c.opts.Config.StackMode
	if b == builtin.Ustack {
		return &Type{Kind: UStack, Size: 16, Format: mode}
	}
	if mode == "build_id" {
		c.errs.Warn(e.Span(), "'build_id' stack mode can only be used for ustack. Falling back to 'raw' mode.")
		mode = "raw"
	}
	return &Type{Kind: KStack, Size: 8, Format: mode, Trim: c.prog.Probe.Fused != nil}
}

// stackName names a stack type as bpftrace does: kstack_bpftrace_127.
func stackName(t *Type) string {
	name, mode, limit := "kstack", t.Format, t.Len
	if t.Kind == UStack {
		name = "ustack"
	}
	if mode == "" {
		mode = "bpftrace"
	}
	if limit == 0 {
		limit = 127
	}
	return fmt.Sprintf("%s_%s_%d", name, mode, limit)
}

// sameStack says whether stacks a and b are of one type: of one mode
// and limit, as bpftrace has it; they are then kept in one stack map.
func sameStack(a, b *Type) bool {
	return stackName(a) == stackName(b)
}

// stackLen checks len() of a stack, its number of frames, and returns
// its type; nil when f is no len() of a stack.
func (c *checker) stackLen(f Func, arg ast.Expr) *Type {
	if _, isMap := arg.(*ast.Map); f != FLen || isMap {
		return nil
	}
	t := c.expr(arg)
	if t == nil || t.Kind != KStack && t.Kind != UStack {
		return nil
	}
	c.info.StackLens = true
	return Int64
}
