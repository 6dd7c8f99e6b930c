package ast

import "gtrace/lang/token"

// Node is any syntax tree node.
type Node interface {
	Span() token.Span
}

// Expr is an expression node.
type Expr interface {
	Node
	exprNode()
}

// Stmt is a statement node.
type Stmt interface {
	Node
	stmtNode()
}

// At is embedded in every node to carry its span.
type At struct {
	Sp token.Span
}

// Span returns the node's byte range in the source.
func (a At) Span() token.Span { return a.Sp }

// Program is a whole script.
type Program struct {
	At
	// Preamble holds C text (#include, #define, struct definitions) that
	// precedes the probes, verbatim.
	Preamble []*CDecl
	Config   []*ConfigEntry
	Probes   []*Probe
	// Macros are the `macro name(...) { ... }` definitions, which
	// lang/macro expands into their calls and then drops.
	Macros []*Macro
	// MapDecls are the top-level `let @a = hash(N);` declarations.
	MapDecls []*MapDecl
}

// MapDecl declares a map's BPF map type and its size: `let @a =
// lruhash(100);`. Kind is the type's name as written.
type MapDecl struct {
	At
	Map        *Map
	Kind       string
	MaxEntries uint64
}

// CDecl is one top-level piece of C: a preprocessor line or a struct,
// union or enum definition, kept as text.
type CDecl struct {
	At
	Text string
}

// ConfigEntry is one `key = value` of a `config = { ... }` block.
type ConfigEntry struct {
	At
	Key   string
	Value Expr
}

// Probe is a list of attach points sharing a predicate and an action block.
type Probe struct {
	At
	Attach []*AttachPoint
	Pred   Expr // nil when absent
	Body   *Block
}

// AttachPoint is one attach point as written, such as
// "tracepoint:syscalls:sys_enter_*" or "BEGIN". The parser does not split
// it: the meaning of its parts depends on the provider (sema and probe).
type AttachPoint struct {
	At
	Text string
}

// Block is a braced list of statements; it opens a scope for $variables.
type Block struct {
	At
	Stmts []Stmt
}

// ExprStmt is an expression evaluated for its effect, such as printf(...).
// Discard marks `_ = X`, which throws X's value away on purpose.
type ExprStmt struct {
	At
	X       Expr
	Discard bool
}

// AssignStmt is `lhs = rhs` or a compound assignment such as `lhs += rhs`.
// Op is token.ASSIGN or one of the *_ASSIGN kinds. LHS is a *Map, *Var or,
// for `@m[k] = count()` style aggregations, a *Map too.
type AssignStmt struct {
	At
	LHS Expr
	Op  token.Kind
	RHS Expr
}

// LetStmt declares a scratch variable: `let $x;`, `let $x: type;`,
// `let $x = expr;`. Type and Value may be nil.
type LetStmt struct {
	At
	Var   *Var
	Type  *TypeExpr
	Value Expr
}

// IfStmt is `if (cond) { ... } else ...`. Else is nil, a *Block or an *IfStmt.
type IfStmt struct {
	At
	Cond Expr
	Then *Block
	Else Stmt
}

// WhileStmt is `while (cond) { ... }`.
type WhileStmt struct {
	At
	Cond Expr
	Body *Block
}

// UnrollStmt is `unroll (n) { ... }`.
type UnrollStmt struct {
	At
	Count Expr
	Body  *Block
}

// ForStmt is `for ($kv : @map) { ... }`, or `for ($i : start..end) { ... }`
// over a range of integers; exactly one of Map and Start is set.
type ForStmt struct {
	At
	Var        *Var
	Map        *Map
	Start, End Expr
	Body       *Block
}

// JumpStmt is break, continue or return (Tok says which). Value is the
// expression of `return expr`, or nil.
type JumpStmt struct {
	At
	Tok   token.Kind
	Value Expr
}

// BlockExpr is `{ stmts; value }` used as an expression: the statements
// run in order, then Value, which is the block's value. Value is nil when
// the block ends in a statement: the block then has no value. Like a
// Block, it is a scope for the variables that let declares in it.
type BlockExpr struct {
	At
	Stmts []Stmt
	Value Expr
	// Macro names the macro whose call this block replaced, for the
	// diagnostics inside it; its span is then the call's.
	Macro string
}

// Macro is `macro name(params) { ... }`. Each parameter is an *Ident,
// which takes any expression, a *Var or a *Map, which take a variable
// or a map by reference. Head spans `macro name`, where diagnostics
// about the definition point.
type Macro struct {
	At
	Name   string
	Head   token.Span
	Params []Expr
	Body   *BlockExpr
}

// IntLit is an integer literal.
type IntLit struct {
	At
	Value uint64
}

// StrLit is a string literal with escapes already resolved.
type StrLit struct {
	At
	Value string
}

// BoolLit is true or false.
type BoolLit struct {
	At
	Value bool
}

// Ident is a bare name: a builtin such as pid or comm, or an enum value.
type Ident struct {
	At
	Name string
}

// Positional is $1..$N (N >= 1) or $# (Count is true, N is 0).
type Positional struct {
	At
	N     int
	Count bool
}

// Var is a scratch variable such as $x; Name includes the '$'.
type Var struct {
	At
	Name string
}

// Map is a map reference such as @x, @ or @x[k1, k2]; Name includes the '@'.
// Keys is empty for a scalar map.
type Map struct {
	At
	Name string
	Keys []Expr
}

// Call is a function call such as count() or printf("%d\n", x).
type Call struct {
	At
	Name string
	Args []Expr
}

// Binary is `X Op Y`.
type Binary struct {
	At
	Op   token.Kind
	X, Y Expr
}

// Unary is `Op X` for !, ~, -, * (dereference) and & (address of).
type Unary struct {
	At
	Op token.Kind
	X  Expr
}

// IncDec is `X++`, `X--`, `++X` or `--X`; Op is token.INC or token.DEC.
type IncDec struct {
	At
	Op   token.Kind
	X    Expr
	Post bool
}

// Ternary is `Cond ? Then : Else`. Then is nil in `Cond ?: Else`, which
// is Cond when Cond is true, evaluated once.
type Ternary struct {
	At
	Cond, Then, Else Expr
}

// Field is `X.Name` or `X->Name` (Arrow). A tuple element `$t.0` is a Field
// whose Name is the decimal index.
type Field struct {
	At
	X     Expr
	Name  string
	Arrow bool
}

// Index is `X[I]` on an array or pointer (map keys are parsed into Map).
type Index struct {
	At
	X, I Expr
}

// Tuple is `(a, b, ...)` with at least two elements, or a record
// `(x = a, y = b)` of one or more, whose field names Names holds.
type Tuple struct {
	At
	Elems []Expr
	Names []string
}

// Cast is `(type)X`.
type Cast struct {
	At
	Type *TypeExpr
	X    Expr
}

// Sizeof is `sizeof(type)` or `sizeof(expr)`; exactly one of Type and X is set.
type Sizeof struct {
	At
	Type *TypeExpr
	X    Expr
}

// Offsetof is `offsetof(struct T, field)` or `offsetof(expr, field)`;
// exactly one of Type and X is set. Field may be a dotted path.
type Offsetof struct {
	At
	Type  *TypeExpr
	X     Expr
	Field []string
}

// TypeExpr names a type as written: "uint8", "struct task_struct",
// "int64[4]", "int8[]", with Ptr levels of '*'. It is an expression only
// as typeof(...) passed to a macro, which may use it where a type goes.
type TypeExpr struct {
	At
	Name string // "uint32", "struct request", "string", ...
	Ptr  int    // number of '*'
	Len  int    // array length, 0 when not an array
	// Unsized marks T[], an array whose length a cast takes from the
	// size of the value cast.
	Unsized bool
	// Of is the expression of typeof(expr), and OfType the type of
	// typeof(type); Name is "typeof" then.
	Of     Expr
	OfType *TypeExpr
}

func (*IntLit) exprNode()     {}
func (*TypeExpr) exprNode()   {}
func (*StrLit) exprNode()     {}
func (*BoolLit) exprNode()    {}
func (*Ident) exprNode()      {}
func (*Positional) exprNode() {}
func (*Var) exprNode()        {}
func (*Map) exprNode()        {}
func (*Call) exprNode()       {}
func (*Binary) exprNode()     {}
func (*Unary) exprNode()      {}
func (*IncDec) exprNode()     {}
func (*Ternary) exprNode()    {}
func (*Field) exprNode()      {}
func (*Index) exprNode()      {}
func (*Tuple) exprNode()      {}
func (*Cast) exprNode()       {}
func (*Sizeof) exprNode()     {}
func (*Offsetof) exprNode()   {}
func (*BlockExpr) exprNode()  {}

func (*Block) stmtNode()      {}
func (*ExprStmt) stmtNode()   {}
func (*AssignStmt) stmtNode() {}
func (*LetStmt) stmtNode()    {}
func (*IfStmt) stmtNode()     {}
func (*WhileStmt) stmtNode()  {}
func (*UnrollStmt) stmtNode() {}
func (*ForStmt) stmtNode()    {}
func (*JumpStmt) stmtNode()   {}
