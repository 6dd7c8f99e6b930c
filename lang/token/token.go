package token

// Kind is the kind of a lexical token.
type Kind int

// The token kinds. Operators are spelled as in the source in String.
const (
	ILLEGAL Kind = iota
	EOF
	COMMENT

	IDENT      // pid, comm, printf, struct names
	INT        // 42, 0x2a, 1_000, 1e6
	STRING     // "text", value unquoted
	VAR        // $x
	POSITIONAL // $1, $#
	MAP        // @name or @
	PROBE      // an attach point, such as tracepoint:syscalls:sys_enter_read
	CPREPROC   // a line starting with #, such as #include <linux/fs.h>

	LPAREN   // (
	RPAREN   // )
	LBRACE   // {
	RBRACE   // }
	LBRACKET // [
	RBRACKET // ]
	COMMA    // ,
	SEMI     // ;
	COLON    // :
	DOT      // .
	ARROW    // ->
	DOTDOT   // ..
	QUESTION // ?

	ASSIGN     // =
	ADD_ASSIGN // +=
	SUB_ASSIGN // -=
	MUL_ASSIGN // *=
	DIV_ASSIGN // /=
	MOD_ASSIGN // %=
	AND_ASSIGN // &=
	OR_ASSIGN  // |=
	XOR_ASSIGN // ^=
	SHL_ASSIGN // <<=
	SHR_ASSIGN // >>=

	ADD  // +
	SUB  // -
	MUL  // *
	DIV  // /
	MOD  // %
	AND  // &
	OR   // |
	XOR  // ^
	SHL  // <<
	SHR  // >>
	LAND // &&
	LOR  // ||
	NOT  // !
	BNOT // ~
	INC  // ++
	DEC  // --

	EQ // ==
	NE // !=
	LT // <
	LE // <=
	GT // >
	GE // >=

	// Keywords.
	IF
	ELSE
	WHILE
	FOR
	UNROLL
	BREAK
	CONTINUE
	RETURN
	LET
	SIZEOF
	OFFSETOF
	CONFIG
	STRUCT
	UNION
	ENUM
	TRUE
	FALSE
	MACRO
)

var names = [...]string{
	ILLEGAL: "ILLEGAL", EOF: "EOF", COMMENT: "COMMENT",
	IDENT: "identifier", INT: "integer", STRING: "string", VAR: "variable",
	POSITIONAL: "positional parameter", MAP: "map", PROBE: "attach point",
	CPREPROC: "preprocessor directive",
	LPAREN:   "(", RPAREN: ")", LBRACE: "{", RBRACE: "}", LBRACKET: "[",
	RBRACKET: "]", COMMA: ",", SEMI: ";", COLON: ":", DOT: ".", ARROW: "->", DOTDOT: "..",
	QUESTION: "?",
	ASSIGN:   "=", ADD_ASSIGN: "+=", SUB_ASSIGN: "-=", MUL_ASSIGN: "*=",
	DIV_ASSIGN: "/=", MOD_ASSIGN: "%=", AND_ASSIGN: "&=", OR_ASSIGN: "|=",
	XOR_ASSIGN: "^=", SHL_ASSIGN: "<<=", SHR_ASSIGN: ">>=",
	ADD: "+", SUB: "-", MUL: "*", DIV: "/", MOD: "%", AND: "&", OR: "|",
	XOR: "^", SHL: "<<", SHR: ">>", LAND: "&&", LOR: "||", NOT: "!",
	BNOT: "~", INC: "++", DEC: "--",
	EQ: "==", NE: "!=", LT: "<", LE: "<=", GT: ">", GE: ">=",
	IF: "if", ELSE: "else", WHILE: "while", FOR: "for", UNROLL: "unroll",
	BREAK: "break", CONTINUE: "continue", RETURN: "return", LET: "let",
	SIZEOF: "sizeof", OFFSETOF: "offsetof", CONFIG: "config",
	STRUCT: "struct", UNION: "union", ENUM: "enum", TRUE: "true", FALSE: "false",
	MACRO: "macro",
}

func (k Kind) String() string {
	if k >= 0 && int(k) < len(names) && names[k] != "" {
		return names[k]
	}
	return "token"
}

// Keywords maps reserved words to their kinds.
var Keywords = map[string]Kind{
	"if": IF, "else": ELSE, "while": WHILE, "for": FOR, "unroll": UNROLL,
	"break": BREAK, "continue": CONTINUE, "return": RETURN, "let": LET,
	"sizeof": SIZEOF, "offsetof": OFFSETOF, "config": CONFIG,
	"struct": STRUCT, "union": UNION, "enum": ENUM, "true": TRUE, "false": FALSE,
	"macro": MACRO,
}

// AssignOp returns the binary operator of a compound assignment, such as ADD
// for ADD_ASSIGN, and false for anything else.
func (k Kind) AssignOp() (Kind, bool) {
	switch k {
	case ADD_ASSIGN:
		return ADD, true
	case SUB_ASSIGN:
		return SUB, true
	case MUL_ASSIGN:
		return MUL, true
	case DIV_ASSIGN:
		return DIV, true
	case MOD_ASSIGN:
		return MOD, true
	case AND_ASSIGN:
		return AND, true
	case OR_ASSIGN:
		return OR, true
	case XOR_ASSIGN:
		return XOR, true
	case SHL_ASSIGN:
		return SHL, true
	case SHR_ASSIGN:
		return SHR, true
	}
	return ILLEGAL, false
}

// IsKeyword reports whether k is a reserved word.
func (k Kind) IsKeyword() bool { return k >= IF && k <= MACRO }
