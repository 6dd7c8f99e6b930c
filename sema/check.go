package sema

import (
	"errors"
	"math"
	"slices"

	"github.com/cilium/ebpf/btf"

	"sort"
	"strconv"
	"strings"

	"gtrace/kernel"
	"gtrace/lang/ast"
	"gtrace/lang/builtin"
	"gtrace/lang/diag"
	"gtrace/lang/token"
	"gtrace/probe"
	"gtrace/symbol"
)

// Options are the checker's inputs beyond the program itself.
type Options struct {
	// Config holds the command line's settings, and bpftrace's defaults
	// where it leaves a setting zero; the checker applies Env and the
	// script's config block over it, and Info.Config holds the result.
	Config Config
	// Env looks up the BPFTRACE_* settings, as os.LookupEnv does; when
	// nil, the environment is not read.
	Env func(key string) (string, bool)
	// Expand resolves an attach point into probes; probe.Parse when nil.
	Expand func(text string) ([]probe.Probe, error)
	// Format reads a tracepoint's format; kernel.TracepointFormat when nil.
	Format func(category, event string) (*kernel.Format, error)
	// KernelType finds a struct, union or enum by its C name;
	// kernel.KernelType when nil.
	KernelType func(name string) (btf.Type, error)
	// EnumValue finds a kernel enum value by name; kernel.EnumValue
	// when nil.
	EnumValue func(name string) (int64, bool)
	// Func finds a kernel function for fentry and fexit arguments;
	// kernel.KernelFunc when nil.
	Func func(name string) (*btf.Func, error)
	// Kaddr finds a kernel symbol's address for kaddr(); the running
	// kernel's /proc/kallsyms when nil.
	Kaddr func(name string) (uint64, bool)
	// KernelVar finds the BTF type id of a kernel variable, for
	// percpu_kaddr(); kernel.KernelVar when nil.
	KernelVar func(name string) (btf.TypeID, error)
	// HasKprobes says whether kprobes can attach; kernel.HasKprobes
	// when nil.
	HasKprobes func() bool
	// Traceable says why a kprobe on a kernel function would not
	// attach, nil if it would; from the kernel's lists of traceable
	// functions when nil.
	Traceable func(fn string) error
	// NoFusion runs every syscall tracepoint as itself, never fused into
	// raw_syscalls.
	NoFusion bool
	// Pid is the process of -p, 0 for none: user-space attach points
	// are resolved in it.
	Pid int
	// UnwindTarget says that a process whose unwind tables dw_ustack
	// reads is named: by -p, -c or --dwarf-pid.
	UnwindTarget bool
	// ContainerPid finds the first process of the container that
	// --cgroup, --pod or --pidns name, for $container_pid; nil when no
	// container is named.
	ContainerPid func() (int, error)
}

// Check type-checks prog and expands its probes. Errors and warnings
// come back as one sorted list; Info is nil when there are errors.
func Check(prog *ast.Program, opts *Options) (*Info, diag.List) {
	var o Options
	if opts != nil {
		o = *opts
	}
	cfg, errs := configure(o.Config, o.Env, prog.Config)
	if errs.HasErrors() {
		errs.Sort()
		return nil, errs
	}
	o.Config = cfg
	c := &checker{opts: &o, info: &Info{Config: cfg, Maps: map[string]*MapInfo{}},
		badMaps: map[string]bool{}, errs: errs} // the config's warnings
	if c.opts.Expand == nil {
		env := &probe.Env{Pid: o.Pid, Unsafe: cfg.Unsafe}
		c.opts.Expand = env.Parse
	}
	if c.opts.Format == nil {
		c.opts.Format = tracepointFormat
	}
	if c.opts.KernelType == nil {
		c.opts.KernelType = kernel.KernelType
	}
	if c.opts.EnumValue == nil {
		c.opts.EnumValue = kernel.EnumValue
	}
	if c.opts.Func == nil {
		c.opts.Func = kernel.KernelFunc
	}
	if c.opts.Kaddr == nil {
		c.opts.Kaddr = (&symbol.Kernel{}).Addr
	}
	if c.opts.KernelVar == nil {
		c.opts.KernelVar = kernel.KernelVar
	}
	if c.opts.HasKprobes == nil {
		c.opts.HasKprobes = kernel.HasKprobes
	}
	if c.opts.Traceable == nil {
		c.opts.Traceable = traceable
	}
	c.declareCTypes(prog)
	c.declareMaps(prog)
	c.expand(prog)
	c.checkBenchNames()
	if c.errs.HasErrors() {
		return nil, c.sorted()
	}
	// Map types are learned from assignments anywhere in the script, so a
	// first pass learns them and a second one checks every use.
	c.quiet = true
	c.checkProgs()
	c.varTypes = map[varDecl]*Type{}
	for decl, v := range c.declared {
		c.varTypes[decl] = v.Type
	}
	c.quiet = false
	c.checkProgs()
	for decl, v := range c.declared {
		if v.Type == nil { // let $x; and nothing assigned
			c.errorf(decl.node, "Could not resolve the type of this variable")
		}
	}
	c.applyDecls(prog)
	for name, m := range c.info.Maps {
		if m.Value == nil && !c.badMaps[name] {
			c.errorAt(m.Span, "Undefined map: %s", name)
		}
		c.info.MapNames = append(c.info.MapNames, name)
	}
	sort.Strings(c.info.MapNames)
	c.checkDummyTSMap()
	if c.errs.HasErrors() {
		return nil, c.sorted()
	}
	return c.info, c.sorted()
}

type checker struct {
	// declared holds each variable by its declaration, and varTypes
	// their types at the end of the first pass.
	declared map[varDecl]*Variable
	varTypes map[varDecl]*Type
	opts     *Options
	// containerPidValue is $container_pid's value, or containerPidErr
	// why there is none, once containerPidFound.
	containerPidFound bool
	containerPidValue int
	containerPidErr   error
	info              *Info
	errs              diag.List
	quiet             bool
	// badMaps holds maps assigned a value that already had an error.
	badMaps map[string]bool
	decls   map[string]*ast.MapDecl // declared maps by name

	prog   *Prog
	scopes []map[string]*Variable
	loops  int
	ctypes cTypes
	// unrolled is how many copies of the statements being checked the
	// enclosing unrolls make, 0 outside any; unrolledNodes counts the
	// nodes that unrolls have made so far in unrolledProg.
	unrolled      int64
	unrolledNodes int64
	unrolledProg  *Prog
	// expansions are the spans of the macro calls whose expansions
	// enclose what is being checked, outermost first.
	expansions []token.Span
}

// maxUnrolledNodes bounds the statements and expressions that unrolls
// make in one probe. Three nested unroll(100) made a million copies,
// which took codegen 38 s and 4.5 GB and could never load.
const maxUnrolledNodes = 100000

// sorted returns the diagnostics in source order, each once: a probe with
// several attach points is checked once for each.
func (c *checker) sorted() diag.List {
	seen := map[string]bool{}
	c.errs = slices.DeleteFunc(c.errs, func(e *diag.Error) bool {
		key := diagKey(e)
		dup := seen[key]
		seen[key] = true
		return dup
	})
	c.errs.Sort()
	return c.errs
}

func (c *checker) errorf(n ast.Node, format string, args ...any) {
	c.errorAt(n.Span(), format, args...)
}

func (c *checker) errorAt(span token.Span, format string, args ...any) {
	if !c.quiet {
		c.errs.Add(span, format, args...)
		c.noteExpansions()
	}
}

func (c *checker) expand(prog *ast.Program) {
	if len(prog.Probes) == 0 {
		c.errorf(prog, "The program has no probes")
		return
	}
	total := 0
	for _, p := range prog.Probes {
		// A wildcard may match nothing, as long as the probe keeps an
		// attach point, as in bpftrace v0.26.
		n := 0
		judged := false // an error or a valid empty attach point says it all
		for _, ap := range p.Attach {
			text, err := c.attachText(ap.Text)
			if err != nil {
				c.errorf(ap, "%v", err)
				judged = true
				continue
			}
			probes, err := c.opts.Expand(text)
			var empty *probe.EmptyError
			var missing *probe.MissingError
			switch {
			case errors.As(err, &empty):
				c.errs.Warn(ap.Span(), "%v", err)
				judged = true
				continue
			case errors.As(err, &missing):
				if c.missing(ap, missing) {
					judged = true
				}
				continue
			case err != nil:
				c.errorf(ap, "%v", err)
				judged = true
				continue
			}
			c.checkKprobes(ap, probes)
			probes = c.joinUprobes(p, text, probes)
			for _, pr := range probes {
				c.info.Progs = append(c.info.Progs, &Prog{Probe: pr, Node: p, Attach: ap})
			}
			n += len(probes)
			total += len(probes)
		}
		if n == 0 && !judged {
			switch c.opts.Config.MissingProbes {
			case "warn":
				if !c.quiet {
					c.errs.Warn(p.Attach[0].Span(), "Probe has no valid attach points. It is being removed which may cause issues with program behavior.")
				}
			case "ignore":
			default:
				c.errorf(p.Attach[0], "Probe has no valid attach points. If this is expected, set the 'missing_probes' config variable to 'warn'.")
			}
		}
	}
	c.unfuseFew()
	c.checkProgCount()
	if total > c.opts.Config.MaxProbes {
		c.errorf(prog, "Can not attach more than %d probes (%d requested); raise max_probes to allow more", c.opts.Config.MaxProbes, total)
	}
}

// missing reports an attach point naming what does not exist, as the
// missing_probes config says: an error, a warning in bpftrace v0.26's
// words (the attach point is dropped), or nothing. It reports whether it
// was an error.
func (c *checker) missing(ap *ast.AttachPoint, err *probe.MissingError) bool {
	switch c.opts.Config.MissingProbes {
	case "warn":
		if !c.quiet {
			c.errs.Warn(ap.Span(), "No matches for %s %s. Skipping.", err.Provider, err.Target)
		}
		return false
	case "ignore":
		return false
	}
	c.errorf(ap, "%s", err.Message())
	return true
}

// fuseAbove is the number of syscall tracepoints above which they run
// fused into raw_syscalls. Fusion makes attach and detach two links
// whatever the number of probes, but its dispatcher runs on every
// syscall of the machine: a few probes are cheaper as tracepoints.
const fuseAbove = 8

// unfuseFew turns fusion off when the script has few syscall probes, or
// when the options say so.
func (c *checker) unfuseFew() {
	n := 0
	for _, p := range c.info.Progs {
		if p.Probe.Fused != nil {
			n++
		}
	}
	if n > fuseAbove && !c.opts.NoFusion {
		return
	}
	for _, p := range c.info.Progs {
		p.Probe.Fused = nil
	}
}

func (c *checker) checkProgs() {
	for _, p := range c.info.Progs {
		*p = Prog{Probe: p.Probe, Node: p.Node, Attach: p.Attach,
			Types: map[ast.Expr]*Type{}, Vars: map[*ast.Var]*Variable{},
			Builtins: map[*ast.Ident]Builtin{}, Funcs: map[*ast.Call]Func{},
			Args: map[*ast.Field]*ArgField{}, Consts: map[ast.Expr]int64{},
			Members: map[*ast.Field]Member{}, Stands: map[ast.Expr]ast.Expr{},
			Expanded: map[*ast.Call][]token.Span{}}
		c.prog = p
		c.scopes = []map[string]*Variable{{}}
		if p.Node.Pred != nil {
			c.expr(p.Node.Pred)
		}
		c.block(p.Node.Body)
	}
}

func (c *checker) block(b *ast.Block) {
	c.scopes = append(c.scopes, map[string]*Variable{})
	warned := false
	for i, s := range b.Stmts {
		c.stmt(s)
		// Dead statements are still checked: their maps and variables
		// keep their types. Their code is dropped as unreachable.
		if !warned && !c.quiet && i+1 < len(b.Stmts) && terminates(s) {
			c.errs.Warn(b.Stmts[i+1].Span(), "Unreachable statement.")
			warned = true
		}
	}
	c.scopes = c.scopes[:len(c.scopes)-1]
}

// usedForEffect reports whether e is an expression whose value a
// statement may drop without a warning: ++ and --, and delete(), whose
// value only says whether the key was there.
func usedForEffect(e ast.Expr) bool {
	switch e := e.(type) {
	case *ast.IncDec:
		return true
	case *ast.Call:
		f := lookupFunc(e.Name)
		return f == FDelete || f == FFind
	}
	return false
}

// terminates reports whether s always leaves the block holding it, by
// return, break, continue or exit(), which returns from the probe as in
// bpftrace, so that what follows never runs.
func terminates(s ast.Stmt) bool {
	switch s := s.(type) {
	case *ast.JumpStmt:
		return true
	case *ast.ExprStmt:
		call, ok := s.X.(*ast.Call)
		return ok && lookupFunc(call.Name) == FExit
	case *ast.Block:
		return slices.ContainsFunc(s.Stmts, terminates)
	case *ast.IfStmt:
		return s.Else != nil && terminates(s.Then) && terminates(s.Else)
	case *ast.UnrollStmt:
		return terminates(s.Body)
	}
	return false
}

func (c *checker) lookupVar(name string) *Variable {
	for i := len(c.scopes) - 1; i >= 0; i-- {
		if v := c.scopes[i][name]; v != nil {
			return v
		}
	}
	return nil
}

func (c *checker) declare(v *ast.Var, t *Type) *Variable {
	nv := c.newVariable(v, t)
	c.scopes[len(c.scopes)-1][v.Name] = nv
	return nv
}

// newVariable makes the variable that v declares. In the second pass it
// starts with the type the first pass ended with: a variable later given
// a longer string or a wider tuple, or only declared before its first
// assignment, has one type at every use. A type the first pass could not
// know (a loop over a map assigned further on) is left to the second.
func (c *checker) newVariable(v *ast.Var, t *Type) *Variable {
	decl := varDecl{c.prog, v}
	if wide := c.varTypes[decl]; wide != nil && wide.Kind != Invalid && !c.quiet {
		t = wide
	}
	nv := &Variable{Name: v.Name, Type: t}
	c.prog.Vars[v] = nv
	if c.declared == nil {
		c.declared = map[varDecl]*Variable{}
	}
	c.declared[decl] = nv
	return nv
}

// varDecl is a variable's declaration in one program: the programs of a
// probe with several attach points share its nodes.
type varDecl struct {
	prog *Prog
	node *ast.Var
}

// declareImplicit declares a variable first met in an assignment. Only
// let gives a variable a block's scope: bpftrace 0.17's tools assign a
// variable in both branches of an if and read it after, which makes it
// the probe's.
func (c *checker) declareImplicit(v *ast.Var, t *Type) *Variable {
	nv := c.newVariable(v, t)
	c.scopes[0][v.Name] = nv
	return nv
}

func (c *checker) stmt(s ast.Stmt) {
	switch s := s.(type) {
	case *ast.Block:
		c.block(s)
	case *ast.ExprStmt:
		t := c.expr(s.X)
		if !s.Discard && !c.quiet && t.Kind != Void && t.Kind != Invalid && !usedForEffect(s.X) {
			c.errs.Warn(s.Span(), "Return value discarded.")
		}
	case *ast.AssignStmt:
		c.assign(s)
	case *ast.LetStmt:
		var t *Type
		if s.Type != nil {
			t = c.sizedType(s.Type)
		}
		if s.Value != nil {
			vt := c.expr(s.Value)
			if c.assignsNothing(s, vt) {
				vt = &Type{Kind: Invalid}
			}
			if t == nil {
				t = vt
			} else if !c.assignable(t, vt) {
				c.errorf(s.Value, "Type mismatch for %s: trying to assign value of type '%s' when variable already has a type '%s'", s.Var.Name, vt, t)
			}
		}
		if c.scopes[len(c.scopes)-1][s.Var.Name] != nil {
			c.errorf(s.Var, "Variable %s was already declared", s.Var.Name)
		}
		c.declare(s.Var, t)
	case *ast.IfStmt:
		c.cond(s.Cond)
		c.block(s.Then)
		if s.Else != nil {
			c.stmt(s.Else)
		}
	case *ast.WhileStmt:
		c.cond(s.Cond)
		c.loops++
		c.block(s.Body)
		c.loops--
	case *ast.UnrollStmt:
		n, ok := c.constInt(s.Count)
		if !ok {
			c.errorf(s.Count, "unroll count must be a constant integer")
		} else if n < 1 {
			c.errorf(s.Count, "unroll minimum value is 1")
		} else if n > 100 {
			c.errorf(s.Count, "unroll maximum value is 100")
		}
		outer := c.unrolled
		if ok && n >= 1 && n <= 100 && !c.quiet {
			c.unrolled = max(outer, 1) * n
			c.countUnrolled(s)
		}
		c.block(s.Body)
		c.unrolled = outer
	case *ast.ForStmt:
		c.forStmt(s)
	case *ast.JumpStmt:
		if s.Value != nil {
			// A probe's return value is not used: return ends the probe.
			c.wantInt(s.Value, c.expr(s.Value))
		}
		if s.Tok != token.RETURN && c.loops == 0 {
			c.errorf(s, "'%s' statement is not allowed outside of a loop", s.Tok)
		}
	default:
		c.errorf(s, "unsupported statement")
	}
}

// countUnrolled adds the nodes that unroll s makes of its body, but for
// those of unrolls nested in it, which count their own, and reports the
// unroll that takes the probe past maxUnrolledNodes. Each node is
// counted once: counting a whole nested body at each level would take
// time quadratic in the nesting.
func (c *checker) countUnrolled(s *ast.UnrollStmt) {
	if c.unrolledProg != c.prog {
		c.unrolledProg, c.unrolledNodes = c.prog, 0
	}
	var nodes int64
	ast.Inspect(s.Body, func(n ast.Node) bool {
		nodes++
		_, nested := n.(*ast.UnrollStmt)
		return !nested
	})
	before := c.unrolledNodes
	c.unrolledNodes += nodes * c.unrolled
	if before <= maxUnrolledNodes && c.unrolledNodes > maxUnrolledNodes {
		c.errorf(s.Count, "unrolled code is too large: more than %d statements and expressions in this probe", maxUnrolledNodes)
	}
}

func (c *checker) cond(e ast.Expr) {
	t := c.expr(e)
	if !isInt(t) && t.Kind != Invalid {
		c.errorf(e, "Invalid condition: expected an integer, a bool or a pointer, got '%s'", t)
	}
}

// assign checks `lhs op rhs`.
func (c *checker) assign(s *ast.AssignStmt) {
	if blk, ok := s.RHS.(*ast.BlockExpr); ok && s.Op == token.ASSIGN && AggregationValue(blk) != nil {
		// @m = { ...; avg($x) }: the block's statements, then the
		// aggregation, as a macro that aggregates expands.
		c.scopes = append(c.scopes, map[string]*Variable{})
		for _, st := range blk.Stmts {
			c.stmt(st)
		}
		c.assign(&ast.AssignStmt{At: s.At, LHS: s.LHS, Op: s.Op, RHS: blk.Value})
		c.scopes = c.scopes[:len(c.scopes)-1]
		c.prog.Types[blk] = VoidT
		return
	}
	if call, ok := s.RHS.(*ast.Call); ok && s.Op == token.ASSIGN {
		if f := lookupFunc(call.Name); f != NoFunc && f.Agg() != NoAgg {
			m, ok := s.LHS.(*ast.Map)
			if !ok {
				c.errorf(call, "%s() should be directly assigned to a map", call.Name)
				return
			}
			n := len(c.errs)
			t := c.aggregation(call, f)
			c.mapAssign(m, t, s, len(c.errs) > n)
			return
		}
	}
	n := len(c.errs)
	rt := c.expr(s.RHS)
	if s.Op != token.ASSIGN && rt.Kind != Int && rt.Kind != Bool && rt.Kind != Invalid {
		c.errorf(s.RHS, "Compound assignment needs an integer, got '%s'", rt)
	}
	switch l := s.LHS.(type) {
	case *ast.Map:
		if s.Op != token.ASSIGN {
			rt = flexInt64 // the map keeps its sign
			if mi := c.info.Maps[l.Name]; mi != nil && mi.Value != nil && mi.Value.Kind == Pointer {
				c.pointerStep(s)
				rt = mi.Value
			}
		}
		c.mapAssign(l, rt, s, len(c.errs) > n)
	case *ast.Var:
		if c.assignsNothing(s, rt) {
			rt = &Type{Kind: Invalid}
		}
		if s.Op != token.ASSIGN {
			v := c.lookupVar(l.Name)
			if v == nil {
				c.errorf(l, "Undefined or undeclared variable: %s", l.Name)
				return
			}
			if v.Type != nil && v.Type.Kind == Int && isInt(rt) {
				// $x op= e is $x = $x op e, a 64-bit value.
				v.Type = widen(v.Type, IntType(8, Signed(v.Type, rt)))
			}
			c.prog.Vars[l] = v
			c.prog.Types[l] = v.Type
			if v.Type != nil && v.Type.Kind == Pointer {
				c.pointerStep(s)
			}
			return
		}
		v := c.lookupVar(l.Name)
		switch {
		case v == nil:
			v = c.declareImplicit(l, rt)
		case v.Type == nil:
			v.Type = rt
		case !c.assignable(v.Type, rt):
			c.errorf(s, "Type mismatch for %s: trying to assign value of type '%s' when variable already contains a value of type '%s'", l.Name, rt, v.Type)
		default:
			v.Type = widen(v.Type, rt)
		}
		c.prog.Vars[l] = v
		c.prog.Types[l] = v.Type
	default:
		c.errorf(s.LHS, "Can only assign to a map or a variable")
	}
}

// pointerStep checks a compound assignment to a pointer: only += and -=
// move it, by whole elements.
func (c *checker) pointerStep(s *ast.AssignStmt) {
	if s.Op != token.ADD_ASSIGN && s.Op != token.SUB_ASSIGN {
		c.errorf(s, "The %s operator can not be applied to a pointer; only += and -= move it", s.Op)
	}
}

func (c *checker) assignable(to, from *Type) bool {
	if to.Kind == Invalid || from.Kind == Invalid {
		return true
	}
	if to.Kind == Int && from.Kind == Bool || to.Kind == Bool && from.Kind == Int {
		return true
	}
	return Equal(to, from)
}

// widen returns the type that holds values of both a and b: the larger
// string, the promoted integer, or the wider elements of a tuple.
func widen(a, b *Type) *Type {
	switch {
	case a.Kind == b.Kind && (a.Kind == String || a.Kind == Buffer) && b.Size > a.Size:
		return b
	case a.Kind == Int && b.Kind == Int:
		return promoteInt(a, b)
	case a.Kind == Tuple && b.Kind == Tuple && len(a.Elems) == len(b.Elems):
		elems := make([]*Type, len(a.Elems))
		changed := false
		for i := range elems {
			bi := i
			if a.Names != nil { // a record's fields match by name
				bi = b.FieldIndex(a.Names[i])
			}
			elems[i] = widen(a.Elems[i], b.Elems[bi])
			changed = changed || elems[i] != a.Elems[i]
		}
		if changed {
			return RecordType(a.Names, elems)
		}
	}
	return a
}

// mapAssign records that m takes values of type t. reported says
// whether checking the value reported an error, which then is all the
// user hears about m. A value invalid for another reason, such as a read
// of a map that nothing assigns, leaves m undefined.
func (c *checker) mapAssign(m *ast.Map, t *Type, s *ast.AssignStmt, reported bool) {
	mi := c.mapKey(m)
	if mi == nil {
		return
	}
	c.prog.Types[m] = t
	if t.Kind == Invalid {
		if reported {
			c.badMaps[m.Name] = true
		}
		return
	}
	if t.Kind == Void || t.Kind == Agg && s.Op != token.ASSIGN {
		c.errorf(s, "Can not assign a value of type '%s' to %s", t, m.Name)
		return
	}
	c.checkDeclared(m, t)
	switch {
	case mi.Value == nil:
		mi.Value = t
		mi.Span = s.Span()
	case mi.Value.Kind == Agg && t.Kind == Agg && mi.Value.Agg == t.Agg:
		if mi.Value.Agg == AggLHist && (mi.Value.LMin != t.LMin || mi.Value.LMax != t.LMax || mi.Value.LStep != t.LStep) ||
			mi.Value.Agg == AggHist && mi.Value.HistBits != t.HistBits {
			c.errorf(s, "Different parameters for %s of %s", t.Agg, m.Name)
		}
		if mi.Value.Agg == AggTSeries {
			mi.Value = c.sameTSeries(s, mi.Value, t)
		}
	case !c.assignable(mi.Value, t):
		c.errorf(s, "Type mismatch for %s: trying to assign value of type '%s' when map already contains a value of type '%s'", m.Name, t, mi.Value)
	default:
		mi.Value = widen(mi.Value, t)
	}
}

// mapKey checks m's keys against the map's key type and returns the map.
func (c *checker) mapKey(m *ast.Map) *MapInfo {
	var kt, shown *Type
	if len(m.Keys) > 0 {
		elems := make([]*Type, len(m.Keys))
		written := make([]*Type, len(m.Keys))
		for i, k := range m.Keys {
			written[i] = c.expr(k)
			elems[i] = c.keyType(written[i], k)
		}
		kt, shown = elems[0], written[0]
		if len(elems) > 1 {
			kt, shown = TupleType(elems), TupleType(written)
		}
	}
	mi := c.useMap(m, kt, shown, m)
	if mi.KeyNames == nil && len(m.Keys) > 0 {
		mi.KeyNames = keyNames(m.Keys)
	}
	return mi
}

// keyNames names each key expression that is a builtin or a variable.
func keyNames(keys []ast.Expr) []string {
	names := make([]string, len(keys))
	for i, k := range keys {
		switch k := k.(type) {
		case *ast.Ident:
			names[i] = k.Name
		case *ast.Var:
			names[i] = k.Name
		}
	}
	return names
}

// useMap checks a key of type kt, nil for none, against m's key type,
// naming key in a mismatch, and returns the map, recording it at its
// first use.
func (c *checker) useMap(m *ast.Map, kt, shown *Type, key ast.Node) *MapInfo {
	mi := c.info.Maps[m.Name]
	if mi == nil {
		mi = &MapInfo{Name: m.Name, Key: kt, keyShown: shown, Span: m.Span()}
		c.info.Maps[m.Name] = mi
		return mi
	}
	if mi.keyUnknown {
		mi.Key, mi.keyShown, mi.keyUnknown = kt, shown, false
		return mi
	}
	switch {
	case (mi.Key == nil) != (kt == nil) || mi.Key != nil && !Equal(mi.Key, kt):
		c.errorf(key, "Argument mismatch for %s: trying to access with arguments: '%s' when map expects arguments: '%s'",
			m.Name, typeList(shown), typeList(mi.keyShown))
	case kt != nil:
		mi.Key = widen(mi.Key, kt)
	}
	return mi
}

// wholeMap returns the map that print(@m), clear(@m), len(@m) or a for
// loop names as a whole: its keys, if it has any, come from its other
// uses.
func (c *checker) wholeMap(m *ast.Map) *MapInfo {
	mi := c.info.Maps[m.Name]
	if mi == nil {
		mi = &MapInfo{Name: m.Name, Span: m.Span(), keyUnknown: true}
		c.info.Maps[m.Name] = mi
	}
	return mi
}

// keyType is the type a value takes as a map key: integers are widened
// to 8 bytes as bpftrace stores them.
func (c *checker) keyType(t *Type, e ast.Expr) *Type {
	switch t.Kind {
	case Int:
		return Slot(t)
	case Bool:
		return BoolT
	case String, Tuple, KStack, UStack, Ksym, Usym, Timestamp, Buffer, Inet, Array, Pointer, Record, MacAddr, Invalid:
		return t
	}
	c.errorf(e, "Value of type '%s' can not be used as a map key", t)
	return &Type{Kind: Invalid}
}

func typeList(t *Type) string {
	if t == nil {
		return ""
	}
	return t.String()
}

// sizedType resolves a type that must have a size: an array's length
// comes from a value only in a cast.
func (c *checker) sizedType(te *ast.TypeExpr) *Type {
	if te.Unsized {
		c.errorf(te, "The length of an array must be given here, as in %s[N]", te.Name)
		return &Type{Kind: Invalid}
	}
	return c.typeExpr(te)
}

// typeExpr resolves a type name as written in a cast or a let.
func (c *checker) typeExpr(te *ast.TypeExpr) *Type {
	if te.Ptr > 0 {
		return c.pointerType(te)
	}
	if te.Of != nil || te.OfType != nil {
		return c.arrayOf(te, c.typeofType(te))
	}
	if strings.HasPrefix(te.Name, "enum ") {
		return c.arrayOf(te, c.enumType(te))
	}
	if isCompositeName(te.Name) && te.Len > 0 {
		return c.recordArray(te)
	}
	if isCompositeName(te.Name) {
		c.errorf(te, "Cannot cast to a %s value, only to a pointer: (%s *)", te.Name, te.Name)
		return &Type{Kind: Invalid}
	}
	var t *Type
	switch te.Name {
	case "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64":
		signed := te.Name[0] == 'i'
		bits, _ := strconv.Atoi(strings.TrimLeft(te.Name, "uint"))
		t = IntType(bits/8, signed)
	case "bool":
		t = BoolT
	case "string":
		t = StringType(c.opts.Config.MaxStrlen)
	default:
		if t = c.cTypeName(te.Name); t == nil {
			c.errorf(te, "Unknown type: %s", te.Name)
			return &Type{Kind: Invalid}
		}
	}
	return c.arrayOf(te, t)
}

// enumType resolves `enum name`, from the script or the kernel.
func (c *checker) enumType(te *ast.TypeExpr) *Type {
	bt, err := c.lookupType(te.Name)
	if err != nil {
		c.errorf(te, "Unknown enum: %s", strings.TrimPrefix(te.Name, "enum "))
		return &Type{Kind: Invalid}
	}
	enum, ok := btf.UnderlyingType(bt).(*btf.Enum)
	if !ok {
		c.errorf(te, "Unknown enum: %s", strings.TrimPrefix(te.Name, "enum "))
		return &Type{Kind: Invalid}
	}
	return EnumType(enum)
}

// arrayOf returns t, or an array of t when te has [N] or [].
func (c *checker) arrayOf(te *ast.TypeExpr, t *Type) *Type {
	if t.Kind == Invalid || te.Len == 0 && !te.Unsized {
		return t
	}
	switch t.Kind {
	case Bool:
		t = &Type{Kind: Bool, Size: 1} // a C bool in an array
	case Int, Pointer:
	default:
		c.errorf(te, "Arrays of %s are not supported", t)
		return &Type{Kind: Invalid}
	}
	if c.arrayTooLarge(te, t) {
		return &Type{Kind: Invalid}
	}
	return ArrayType(t, te.Len)
}

// maxArraySize bounds the arrays a script declares: code generation
// holds a value in a scratch area of 32 KiB.
const maxArraySize = 32 << 10

// arrayTooLarge reports an array of te.Len elements of elem larger than
// maxArraySize.
func (c *checker) arrayTooLarge(te *ast.TypeExpr, elem *Type) bool {
	if elem.Size == 0 || te.Len <= maxArraySize/elem.Size {
		return false
	}
	c.errorf(te, "An array of %d elements of %d bytes is too large: at most %d bytes are supported", te.Len, elem.Size, maxArraySize)
	return true
}

// cTypeName resolves a C type name, such as size_t, u32 or char, from
// the script's definitions or the kernel's BTF, to an integer, a bool or
// a pointer; it returns nil for anything else.
func (c *checker) cTypeName(name string) *Type {
	bt, err := c.lookupType(name)
	if err != nil {
		return nil
	}
	switch t := fromBTF(bt); {
	case t == nil:
		return nil
	case t.Kind == Int || t.Kind == Bool || t.Kind == Pointer:
		return t
	}
	return nil
}

// nameType returns e as a type when it is a name that is no value, such
// as size_t in typeof(size_t) or pid_t in sizeof(pid_t), or nil.
func (c *checker) nameType(e ast.Expr) *ast.TypeExpr {
	id, ok := e.(*ast.Ident)
	if !ok || lookupBuiltin(id.Name) != builtin.None {
		return nil
	}
	if _, enum := c.enumValue(id.Name); enum {
		return nil
	}
	return &ast.TypeExpr{At: id.At, Name: id.Name}
}

// typeofType resolves typeof(type) and typeof(expr). The expression is
// only typed: it is never evaluated.
func (c *checker) typeofType(te *ast.TypeExpr) *Type {
	if named := c.nameType(te.Of); named != nil { // typeof(size_t)
		return c.typeExpr(named)
	}
	if of, ok := te.Of.(*ast.TypeExpr); ok { // typeof(t), t a macro's type argument
		return c.typeExpr(of)
	}
	if te.Of != nil {
		t := c.expr(te.Of)
		if t.Kind == Void || t.Kind == Agg {
			c.errorf(te.Of, "typeof() can not take a value of type '%s'", t)
			return &Type{Kind: Invalid}
		}
		return t
	}
	of := te.OfType
	if of.Ptr == 0 && of.Len == 0 && isCompositeName(of.Name) {
		bt, err := c.lookupType(of.Name)
		if err != nil {
			c.errorf(of, "%v", err)
			return &Type{Kind: Invalid}
		}
		if t := fromBTF(bt); t != nil {
			return t
		}
		c.errorf(of, "%s has no size", of.Name)
		return &Type{Kind: Invalid}
	}
	return c.typeExpr(of)
}

// constInt evaluates a constant integer expression.
func (c *checker) constInt(e ast.Expr) (int64, bool) {
	switch e := e.(type) {
	case *ast.IntLit:
		return int64(e.Value), true
	case *ast.Unary:
		if e.Op == token.SUB {
			v, ok := c.constInt(e.X)
			return -v, ok
		}
	case *ast.Positional:
		if e.Count {
			return int64(len(c.opts.Config.Params)), true
		}
		return c.opts.Config.ParamInt(e.N)
	case *ast.BlockExpr:
		// A macro whose body is a constant, such as `macro top() { 5 }`.
		if len(e.Stmts) == 0 && e.Value != nil {
			return c.constInt(e.Value)
		}
	}
	return 0, false
}

// optionInt is the value of an integer program option, getopt("top",
// 10), which stands for (uint64)N or (int64)N: print()'s top and div
// take one, so that a tool's option can choose them. Elsewhere, as in
// bpftrace, an option is no literal.
func (c *checker) optionInt(e ast.Expr) (int64, bool) {
	if b, ok := e.(*ast.BlockExpr); ok && len(b.Stmts) == 0 && b.Value != nil {
		return c.optionInt(b.Value) // a macro's expansion
	}
	call, ok := e.(*ast.Call)
	if !ok || call.Name != "getopt" || c.expr(e).Kind != Int {
		return 0, false
	}
	if cast, ok := c.prog.Stands[call].(*ast.Cast); ok {
		return c.constInt(cast.X)
	}
	return 0, false
}

func (c *checker) param(n int) (string, bool) {
	if n < 1 || n > len(c.opts.Config.Params) {
		return "", false
	}
	return c.opts.Config.Params[n-1], true
}

func (c *checker) expr(e ast.Expr) *Type {
	t := c.exprType(e)
	if t == nil {
		t = &Type{Kind: Invalid}
	}
	c.prog.Types[e] = t
	return t
}

func (c *checker) exprType(e ast.Expr) *Type {
	switch e := e.(type) {
	case *ast.IntLit:
		return literalType(e.Value)
	case *ast.StrLit:
		return StringType(len(e.Value) + 1)
	case *ast.BoolLit:
		return BoolT
	case *ast.Positional:
		if e.Count {
			return Int64
		}
		return c.positional(e)
	case *ast.Ident:
		return c.ident(e)
	case *ast.Var:
		v := c.lookupVar(e.Name)
		if v == nil && e.Name == containerPidVar {
			return c.containerPid(e)
		}
		if v == nil || v.Type == nil {
			c.errorf(e, "Undefined or undeclared variable: %s", e.Name)
			return nil
		}
		c.prog.Vars[e] = v
		return v.Type
	case *ast.Map:
		mi := c.mapKey(e)
		if mi == nil || mi.Value == nil {
			return nil
		}
		switch {
		case mi.Value.Kind != Agg:
			return mi.Value
		case mi.Value.Agg == AggCount:
			return Uint64 // its value merged over the CPUs
		case mi.Value.Agg == AggSum || mi.Value.Agg == AggMin || mi.Value.Agg == AggMax || mi.Value.Agg == AggAvg:
			return Int64
		}
		c.errorf(e, "The value of %s, a %s() aggregation, can only be printed", e.Name, mi.Value.Agg)
		return nil
	case *ast.Call:
		return c.call(e)
	case *ast.Binary:
		return c.binary(e)
	case *ast.Unary:
		t := c.expr(e.X)
		switch e.Op {
		case token.NOT:
			c.wantInt(e.X, t)
			return BoolT
		case token.BNOT, token.SUB:
			c.wantInt(e.X, t)
			if lit, ok := e.X.(*ast.IntLit); ok && e.Op == token.SUB && lit.Value <= 1<<63 {
				return negativeLiteralType(lit.Value)
			}
			if t.Kind == Int {
				return IntType(8, t.Signed || e.Op == token.SUB)
			}
			return Int64
		}
		return c.unaryMemory(e, t)
	case *ast.IncDec:
		switch x := e.X.(type) {
		case *ast.Var:
			v := c.lookupVar(x.Name)
			if v == nil {
				// bpftrace lets $x++ declare $x as 0.
				v = c.declareImplicit(x, Int64)
			}
			c.prog.Vars[x] = v
			c.wantInt(x, v.Type)
			v.Type = stepped(v.Type, e.Op)
			c.prog.Types[x] = v.Type
			return v.Type
		case *ast.Map:
			mi := c.mapKey(x)
			if mi.Value == nil {
				mi.Value = Int64
				mi.Span = x.Span()
			}
			c.wantInt(x, mi.Value)
			mi.Value = stepped(mi.Value, e.Op)
			c.checkDeclared(x, mi.Value)
			c.prog.Types[x] = mi.Value
			return mi.Value
		}
		c.errorf(e, "The %s operator must be applied to a map or a variable", e.Op)
		return nil
	case *ast.Ternary:
		c.cond(e.Cond)
		a := c.prog.Types[e.Cond]
		if e.Then != nil {
			a = c.expr(e.Then)
		}
		b := c.expr(e.Else)
		if a.Kind == Invalid || b.Kind == Invalid {
			return nil
		}
		if !c.assignable(a, b) {
			c.errorf(e, "Ternary operator branches have different types: '%s' and '%s'", a, b)
			return nil
		}
		if a.Kind == Int && b.Kind == Int {
			return IntType(8, a.Signed && b.Signed)
		}
		return widen(a, b)
	case *ast.Field:
		return c.field(e)
	case *ast.Tuple:
		elems := make([]*Type, len(e.Elems))
		for i, x := range e.Elems {
			t := c.expr(x)
			if t.Kind == Void || t.Kind == Agg {
				c.errorf(x, "Value of type '%s' can not be part of a tuple", t)
			}
			elems[i] = t
		}
		if e.Names != nil {
			for i, n := range e.Names {
				if slices.Index(e.Names, n) < i {
					c.errorf(e.Elems[i], "Record has a duplicate field: %s", n)
					return nil
				}
			}
			return RecordType(e.Names, elems)
		}
		return TupleType(elems)
	case *ast.Cast:
		t := c.typeExpr(e.Type)
		xt := c.expr(e.X)
		if t.Kind == Array || xt.Kind == Array && t.Kind == Int {
			return c.arrayCast(e, t, xt)
		}
		if v, ok := c.constInt(e.X); ok && t.Enum != nil && t.EnumName(uint64(v)) == "" {
			c.errorf(e, "Enum: %s doesn't contain a variant value of %d", t.Enum.Name, v)
		}
		switch {
		case t.Kind != Int && t.Kind != Bool && t.Kind != Pointer && t.Kind != Invalid:
			c.errorf(e, "Cannot cast to '%s'", t)
			return nil
		case t.Kind != Invalid && !isInt(xt) && xt.Kind != Invalid:
			c.errorf(e, "Cannot cast from '%s' to '%s'", xt, t)
		}
		return t
	case *ast.Sizeof:
		return c.sizeof(e)
	case *ast.Index:
		return c.index(e)
	case *ast.Offsetof:
		return c.offsetof(e)
	case *ast.BlockExpr:
		return c.blockExpr(e)
	case *ast.TypeExpr:
		c.errorf(e, "%s is a type, not a value", c.typeExpr(e))
		return nil
	}
	c.errorf(e, "unsupported expression")
	return nil
}

func (c *checker) wantInt(e ast.Expr, t *Type) {
	if !isInt(t) && t.Kind != Invalid {
		c.errorf(e, "Expected an integer, got '%s'", t)
	}
}

func (c *checker) ident(e *ast.Ident) *Type {
	if isConfig(e.Name) {
		return c.configRecord(e)
	}
	b := lookupBuiltin(e.Name)
	if b == builtin.None {
		if t, ok := c.stdlibIdent(e); ok {
			return t
		}
		if v, ok := c.enumValue(e.Name); ok {
			c.prog.Consts[e] = v
			if enum := c.ctypes.enumOf[e.Name]; enum != nil {
				return EnumType(enum)
			}
			return Int64
		}
		msg := "Unknown identifier: '%s'"
		if e.Name == strings.ToUpper(e.Name) { // looks like a C constant
			msg += "; if it is a constant from a C header, add `#define %[1]s value` to the script"
		}
		c.errorf(e, msg, e.Name)
		return nil
	}
	c.prog.Builtins[e] = b
	spec := builtins[b]
	if spec.context && !c.prog.Probe.Offers(b) {
		c.errorf(e, "The %s builtin can not be used with '%s' probes", e.Name, c.providerName())
		return nil
	}
	if n, _ := ArgIndex(e.Name); b == builtin.ArgN && c.prog.Probe.Context() == probe.Registers && n >= 6 {
		c.errorf(e, "%s: a %s reads only the six arguments passed in registers, arg0 to arg5", e.Name, c.providerName())
		return nil
	}
	switch b {
	case builtin.Args:
		return c.wholeArgs(e)
	case builtin.Func:
		if c.prog.Probe.Kind == probe.Kprobe {
			return KsymT // the function's address, printed by name
		}
		if c.prog.Probe.Funcs != nil {
			return StringType(c.prog.Probe.NameSize())
		}
		return StringType(len(c.prog.Probe.Func()) + 1)
	case builtin.Retval:
		if c.prog.Probe.Context() == probe.BTFArgs {
			fa, err := c.funcArgs()
			if err != nil {
				c.errorf(e, "%v", err)
				return nil
			}
			return fa.retval.Type
		}
	case builtin.Probe:
		if c.prog.Probe.Funcs != nil {
			return StringType(c.prog.Probe.NameSize())
		}
		return StringType(len(c.prog.Probe.Name) + 1)
	case builtin.Kstack, builtin.Ustack:
		return c.stackBuiltin(e, b)
	case builtin.DwUstack:
		return c.dwUstack(e, c.stackBuiltin(e, builtin.Ustack))
	case builtin.Ppid, builtin.Pcomm:
		// As bpftrace's: the pid (a thread's id) and comm of the task
		// that forked this one.
		parent := &ast.Field{At: e.At, Arrow: true, Name: "real_parent", X: &ast.Ident{At: e.At, Name: "curtask"}}
		if b == builtin.Pcomm {
			return c.stands(e, &ast.Field{At: e.At, Arrow: true, Name: "comm", X: parent})
		}
		return c.stands(e, &ast.Cast{At: e.At, Type: &ast.TypeExpr{At: e.At, Name: "uint32"},
			X: &ast.Field{At: e.At, Arrow: true, Name: "pid", X: parent}})
	case builtin.Ctx, builtin.Username, builtin.Probetype, builtin.LeaderComm, builtin.LeaderTid:
		return c.stdlibBuiltin(e, b)
	case builtin.Curtask:
		if task, err := c.lookupType("struct task_struct"); err == nil {
			return &Type{Kind: Pointer, Size: 8, BTF: task}
		}
	}
	return spec.typ
}

func (c *checker) providerName() string {
	name, _, _ := strings.Cut(c.prog.Probe.Name, ":")
	return name
}

func (c *checker) field(e *ast.Field) *Type {
	if id, ok := e.X.(*ast.Ident); ok && id.Name == "args" {
		if !c.prog.Probe.Offers(builtin.Args) {
			c.errorf(id, "The args builtin can not be used with '%s' probes", c.providerName())
			return nil
		}
		c.prog.Builtins[id] = builtin.Args
		c.prog.Types[id] = VoidT
		fields, err := c.probeArgs()
		if err != nil {
			c.errorf(e, "%v", err)
			return nil
		}
		for _, f := range fields {
			if f.Name == e.Name {
				if f.Type == nil {
					c.errorf(e, "args.%s has a type gtrace can not read", e.Name)
					return nil
				}
				if f.From == UprobeArg {
					return c.registerArg(e, f)
				}
				c.prog.Args[e] = f
				return f.Type
			}
		}
		c.errorf(e, "Can't find a field %s in %s", e.Name, c.prog.Probe.Name)
		return nil
	}
	t := c.expr(e.X)
	if t.Kind == Pointer || t.Kind == Record {
		return c.recordField(e, t)
	}
	if t.Kind == Tuple {
		i := t.FieldIndex(e.Name)
		switch {
		case i < 0 && t.Names != nil:
			c.errorf(e, "Record has no field named '%s'", e.Name)
			return nil
		case i < 0:
			c.errorf(e, "Invalid tuple index: %s. Found %d elements in tuple.", e.Name, len(t.Elems))
			return nil
		}
		return t.Elems[i]
	}
	if t.Kind != Invalid {
		c.errorf(e, "Can not access field '%s' on expression of type '%s'", e.Name, t)
	}
	return nil
}

func (c *checker) binary(e *ast.Binary) *Type {
	a, b := c.expr(e.X), c.expr(e.Y)
	if c.quiet {
		// In the first pass, a map no assignment has typed yet that
		// meets an integer is taken for one, as bpftrace does, so that
		// @n = @n + 1 types @n. If nothing else assigns the map, the
		// second pass finds it undefined.
		if c.untypedMap(e.X) && isInt(b) {
			a = Int64
		}
		if c.untypedMap(e.Y) && isInt(a) {
			b = Int64
		}
	}
	if a.Kind == Invalid || b.Kind == Invalid {
		return nil
	}
	switch e.Op {
	case token.LAND, token.LOR:
		c.wantInt(e.X, a)
		c.wantInt(e.Y, b)
		return BoolT
	case token.EQ, token.NE, token.LT, token.LE, token.GT, token.GE:
		if a.Kind == String && b.Kind == String {
			if e.Op != token.EQ && e.Op != token.NE {
				c.errorf(e, "Strings can only be compared with == and !=")
			}
			return BoolT
		}
		if a.Kind == Buffer && b.Kind == Buffer || a.Kind == Array && Equal(a, b) {
			if e.Op != token.EQ && e.Op != token.NE {
				c.errorf(e, "Buffers and arrays can only be compared with == and !=")
			}
			return BoolT
		}
		if !isInt(a) || !isInt(b) {
			c.errorf(e, "Type mismatch for '%s': comparing '%s' with '%s'", e.Op, a, b)
			return nil
		}
		return BoolT
	}
	if !isInt(a) || !isInt(b) {
		c.errorf(e, "Type mismatch for '%s': comparing '%s' with '%s'", e.Op, a, b)
		return nil
	}
	// A pointer plus or minus an integer is a pointer, moved in units of
	// what it points to.
	if a.Kind == Pointer && b.Kind != Pointer && (e.Op == token.ADD || e.Op == token.SUB) {
		return a
	}
	if b.Kind == Pointer && a.Kind != Pointer && e.Op == token.ADD {
		return b
	}
	// C's usual arithmetic conversions, on 64-bit values.
	return IntType(8, Signed(a, b))
}

// untypedMap reports whether e reads a map that has no value type yet.
func (c *checker) untypedMap(e ast.Expr) bool {
	m, ok := e.(*ast.Map)
	if !ok {
		return false
	}
	mi := c.info.Maps[m.Name]
	return mi != nil && mi.Value == nil
}

// isInt reports whether t takes part in arithmetic: integers, bools and
// pointers, as in C.
func isInt(t *Type) bool { return t.Kind == Int || t.Kind == Bool || t.Kind == Pointer }

// Signed reports whether arithmetic and comparisons between a and b are
// signed after C's promotion to 64 bits: everything narrower becomes
// int64, so only a 64-bit unsigned operand makes them unsigned.
func Signed(a, b *Type) bool { return promotesSigned(a) && promotesSigned(b) }

func promotesSigned(t *Type) bool {
	return t.Kind == Bool || t.Kind != Pointer && (t.Signed || t.Size < 8)
}

// aggregation checks an aggregating call (count, hist...) and returns the
// map value type it makes.
func (c *checker) aggregation(call *ast.Call, f Func) *Type {
	if !c.arity(call, f) {
		return &Type{Kind: Invalid}
	}
	c.prog.Funcs[call] = f
	if f == FTseries {
		c.unstable(call, "unstable_tseries", "tseries")
		return c.tseries(call)
	}
	t := &Type{Kind: Agg, Agg: f.Agg()}
	for _, a := range call.Args {
		c.wantInt(a, c.expr(a))
	}
	switch f {
	case FHist:
		if len(call.Args) == 2 {
			k, ok := c.constInt(call.Args[1])
			if !ok || k < 0 || k > 5 {
				c.errorf(call.Args[1], "hist: bits must be a constant between 0 and 5")
			}
			t.HistBits = k
		}
	case FLhist:
		var vals [3]int64
		for i, a := range call.Args[1:] {
			v, ok := c.constInt(a)
			if !ok {
				c.errorf(a, "lhist: min, max and step must be constant integers")
				return t
			}
			vals[i] = v
		}
		t.LMin, t.LMax, t.LStep = vals[0], vals[1], vals[2]
		switch {
		case t.LStep <= 0:
			c.errorf(call.Args[3], "lhist: step must be positive")
		case t.LMin < 0:
			c.errorf(call.Args[1], "lhist: min must be non-negative")
		case t.LMax <= t.LMin:
			c.errorf(call.Args[2], "lhist: max must be greater than min")
		case (t.LMax-t.LMin)/t.LStep > 1000:
			c.errorf(call, "lhist: too many buckets: (max-min)/step must be at most 1000")
		}
	}
	return t
}

func (c *checker) arity(call *ast.Call, f Func) bool {
	spec := funcs[f]
	n := len(call.Args)
	if n < spec.minArgs || n > spec.maxArgs {
		switch {
		case spec.minArgs == spec.maxArgs:
			c.errorf(call, "%s() requires %d arguments (%d provided)", spec.name, spec.minArgs, n)
		case n < spec.minArgs:
			c.errorf(call, "%s() requires at least %d arguments (%d provided)", spec.name, spec.minArgs, n)
		default:
			c.errorf(call, "%s() takes up to %d arguments (%d provided)", spec.name, spec.maxArgs, n)
		}
		return false
	}
	return true
}

// arrayCast checks a cast that reinterprets bytes: an integer, a string
// or an array to an array of integers (T[] takes its length from the
// value), or an array to an integer of its size.
func (c *checker) arrayCast(e *ast.Cast, t, xt *Type) *Type {
	if xt.Kind == Invalid {
		return nil
	}
	if t.Kind == Int {
		if xt.Size != t.Size {
			c.errorf(e, "Cannot cast from '%s' (%d bytes) to '%s' (%d bytes): the sizes differ", xt, xt.Size, t, t.Size)
			return nil
		}
		return t
	}
	if xt.Kind != Int && xt.Kind != Bool && xt.Kind != String && xt.Kind != Array {
		c.errorf(e, "Cannot cast from '%s' to '%s'", xt, t)
		return nil
	}
	elem := t.Elems[0]
	if e.Type.Unsized {
		if xt.Size%elem.Size != 0 {
			c.errorf(e, "Cannot cast from '%s' (%d bytes) to an array of %s: the size is not a multiple of %d", xt, xt.Size, elem, elem.Size)
			return nil
		}
		return ArrayType(elem, xt.Size/elem.Size)
	}
	size := xt.Size
	if v, ok := c.constInt(e.X); ok && xt.Kind == Int {
		size = literalSize(v)
	}
	// An integer fits in a wider array of up to 8 bytes, zero extended.
	widens := xt.Kind != String && xt.Kind != Array && t.Size <= 8 && t.Size >= size
	if xt.Size != t.Size && !widens {
		c.errorf(e, "Cannot cast from '%s' (%d bytes) to '%s' (%d bytes): the sizes differ", xt, size, t, t.Size)
		return nil
	}
	return t
}

// literalSize is the size of the smallest integer that holds v.
func literalSize(v int64) int {
	switch {
	case v >= math.MinInt8 && v <= math.MaxUint8:
		return 1
	case v >= math.MinInt16 && v <= math.MaxUint16:
		return 2
	case v >= math.MinInt32 && v <= math.MaxUint32:
		return 4
	}
	return 8
}

// AggregationValue returns the aggregation call, such as avg($x), that
// the block b ends in, or nil.
func AggregationValue(b *ast.BlockExpr) *ast.Call {
	call, ok := b.Value.(*ast.Call)
	if !ok || lookupFunc(call.Name).Agg() == NoAgg {
		return nil
	}
	return call
}

// stands checks x, which the builtin e stands for, and records it.
func (c *checker) stands(e *ast.Ident, x ast.Expr) *Type {
	if _, err := c.lookupType("struct task_struct"); err != nil {
		c.errorf(e, "%s reads struct task_struct, which needs the kernel's BTF: %v", e.Name, err)
		return nil
	}
	c.prog.Stands[e] = x
	return c.expr(x)
}
