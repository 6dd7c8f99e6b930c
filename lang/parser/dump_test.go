package parser

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"gtrace/lang/ast"
	"gtrace/lang/token"
)

// dumpTree prints prog as an indented tree, one node a line, in the
// format of bpftrace's "-d ast" up to v0.24. The parser's tests check
// parse trees with it: the tree shows what source text hides, such as a
// tuple key against several keys. Where gtrace keeps what bpftrace
// desugared, it shows it as written: "->" for an arrow, "+=" for a
// compound assignment, "block" for a nested block.
func dumpTree(w io.Writer, prog *ast.Program) {
	d := &dumper{w: w}
	for _, c := range prog.Preamble {
		d.line(0, c.Text)
	}
	d.line(0, "Program")
	if len(prog.Config) > 0 {
		d.line(1, "config")
		for _, c := range prog.Config {
			d.line(2, "=")
			d.line(3, "var: "+c.Key)
			d.expr(3, c.Value)
		}
	}
	for _, p := range prog.Probes {
		for _, a := range p.Attach {
			d.line(1, a.Text)
		}
		if p.Pred != nil {
			d.line(2, "pred")
			d.expr(3, p.Pred)
		}
		if p.Body != nil {
			d.stmts(2, p.Body)
		}
	}
}

type dumper struct {
	w io.Writer
}

func (d *dumper) line(depth int, text string) {
	fmt.Fprintf(d.w, "%s%s\n", strings.Repeat(" ", depth), text)
}

func (d *dumper) stmts(depth int, b *ast.Block) {
	for _, s := range b.Stmts {
		d.stmt(depth, s)
	}
}

func (d *dumper) stmt(depth int, s ast.Stmt) {
	switch s := s.(type) {
	case *ast.ExprStmt:
		d.expr(depth, s.X)
	case *ast.AssignStmt:
		d.line(depth, s.Op.String())
		if m, ok := s.LHS.(*ast.Map); ok && len(m.Keys) > 0 {
			d.line(depth+1, "map: "+m.Name)
			d.keys(depth+2, m)
		} else {
			d.expr(depth+1, s.LHS)
		}
		d.expr(depth+1, s.RHS)
	case *ast.LetStmt:
		text := "decl"
		if s.Type != nil {
			text += " :: [" + typeString(s.Type) + "]"
		}
		d.line(depth, text)
		d.expr(depth+1, s.Var)
		if s.Value != nil {
			d.expr(depth+1, s.Value)
		}
	case *ast.IfStmt:
		d.line(depth, "if")
		d.expr(depth+1, s.Cond)
		d.line(depth+1, "then")
		d.stmts(depth+2, s.Then)
		switch e := s.Else.(type) {
		case *ast.Block:
			d.line(depth+1, "else")
			d.stmts(depth+2, e)
		case *ast.IfStmt:
			d.line(depth+1, "else")
			d.stmt(depth+2, e)
		}
	case *ast.WhileStmt:
		d.line(depth, "while(")
		d.expr(depth+1, s.Cond)
		d.line(depth+1, ")")
		d.stmts(depth+2, s.Body)
	case *ast.UnrollStmt:
		d.line(depth, "unroll")
		d.expr(depth+1, s.Count)
		d.line(depth+1, "block")
		d.stmts(depth+2, s.Body)
	case *ast.ForStmt:
		d.line(depth, "for")
		d.line(depth+1, "decl")
		d.expr(depth+2, s.Var)
		d.expr(depth+2, s.Map)
		d.line(depth+1, "stmts")
		d.stmts(depth+2, s.Body)
	case *ast.JumpStmt:
		d.line(depth, s.Tok.String())
	case *ast.Block:
		d.line(depth, "block")
		d.stmts(depth+1, s)
	}
}

// keys prints map keys; several keys print as one tuple, as bpftrace
// builds them.
func (d *dumper) keys(depth int, m *ast.Map) {
	if len(m.Keys) == 1 {
		d.expr(depth, m.Keys[0])
		return
	}
	d.line(depth, "tuple:")
	for _, k := range m.Keys {
		d.expr(depth+1, k)
	}
}

func (d *dumper) expr(depth int, x ast.Expr) {
	switch x := x.(type) {
	case *ast.IntLit:
		d.line(depth, "int: "+strconv.FormatUint(x.Value, 10))
	case *ast.StrLit:
		d.line(depth, "string: "+strings.Trim(strconv.Quote(x.Value), `"`))
	case *ast.BoolLit:
		d.line(depth, "bool: "+strconv.FormatBool(x.Value))
	case *ast.Ident:
		d.line(depth, "identifier: "+x.Name)
	case *ast.Positional:
		if x.Count {
			d.line(depth, "param: $#")
		} else {
			d.line(depth, "param: $"+strconv.Itoa(x.N))
		}
	case *ast.Var:
		d.line(depth, "variable: "+x.Name)
	case *ast.Map:
		if len(x.Keys) == 0 {
			d.line(depth, "map: "+x.Name)
			return
		}
		d.line(depth, "[]")
		d.line(depth+1, "map: "+x.Name)
		d.keys(depth+1, x)
	case *ast.Call:
		d.line(depth, "call: "+x.Name)
		for _, a := range x.Args {
			d.expr(depth+1, a)
		}
	case *ast.Binary:
		d.line(depth, x.Op.String())
		d.expr(depth+1, x.X)
		d.expr(depth+1, x.Y)
	case *ast.Unary:
		op := x.Op.String()
		if x.Op == token.MUL {
			op = "dereference"
		}
		d.line(depth, op)
		d.expr(depth+1, x.X)
	case *ast.IncDec:
		when := " (pre)"
		if x.Post {
			when = " (post)"
		}
		d.line(depth, x.Op.String()+when)
		d.expr(depth+1, x.X)
	case *ast.Ternary:
		d.line(depth, "?:")
		d.expr(depth+1, x.Cond)
		d.expr(depth+1, x.Then)
		d.expr(depth+1, x.Else)
	case *ast.Field:
		op := "."
		if x.Arrow {
			op = "->"
		}
		d.line(depth, op)
		d.expr(depth+1, x.X)
		d.line(depth+1, x.Name)
	case *ast.Index:
		d.line(depth, "[]")
		d.expr(depth+1, x.X)
		d.expr(depth+1, x.I)
	case *ast.Tuple:
		d.line(depth, "tuple:")
		for _, e := range x.Elems {
			d.expr(depth+1, e)
		}
	case *ast.Cast:
		d.line(depth, "("+typeString(x.Type)+")")
		d.expr(depth+1, x.X)
	case *ast.Sizeof:
		d.line(depth, "sizeof: ")
		d.operand(depth+1, x.Type, x.X)
	case *ast.TypeExpr:
		d.line(depth, typeString(x))
	case *ast.Offsetof:
		d.line(depth, "offsetof: ")
		d.operand(depth+1, x.Type, x.X)
		for _, f := range x.Field {
			d.line(depth+1, f)
		}
	}
}

// operand prints the type or expression argument of sizeof and offsetof.
func (d *dumper) operand(depth int, t *ast.TypeExpr, x ast.Expr) {
	if t != nil {
		d.line(depth, typeString(t))
	} else {
		d.expr(depth, x)
	}
}

// ast.TypeString spells t as bpftrace prints types: "uint8", "int64[4]",
// "struct task_struct *".
func typeString(t *ast.TypeExpr) string {
	s := t.Name
	switch {
	case t.OfType != nil:
		s = "typeof(type " + typeString(t.OfType) + ")"
	case t.Of != nil:
		s = "typeof(" + paren(t.Of) + ")"
	}
	if t.Len > 0 {
		s += "[" + strconv.Itoa(t.Len) + "]"
	}
	if t.Unsized {
		s += "[]"
	}
	if t.Ptr > 0 {
		s += " " + strings.Repeat("*", t.Ptr)
	}
	return s
}
