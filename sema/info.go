package sema

import (
	"gtrace/lang/ast"
	"gtrace/lang/token"
	"gtrace/probe"
)

// Config holds the settings that shape generated code: from a script's
// config block, the BPFTRACE_* environment and the command line.
type Config struct {
	MaxStrlen  int // bytes kept of a string, NUL included
	MaxMapKeys int // entries of each map
	MaxProbes  int // attach points a script may expand to
	Unsafe     bool
	Params     []string // positional parameters $1..$N
	Named      []string // program options after --, "name" or "name=value", for getopt()
	// MissingProbes says what a probe whose attach points all matched
	// nothing does: "error", "warn" (dropped with a warning) or
	// "ignore" (dropped).
	MissingProbes string
	Settings
}

// DefaultConfig returns bpftrace's defaults.
func DefaultConfig() Config {
	return Config{MaxStrlen: 1024, MaxMapKeys: 4096, MaxProbes: 1024, MissingProbes: "error",
		Settings: defaultSettings()}
}

// Info is what the checker found out about a program.
type Info struct {
	Config Config
	// Options are the program options getopt() reads, by name.
	Options map[string]*ProgramOption
	// Maps holds every map by name ("@x"); MapNames lists them sorted.
	Maps     map[string]*MapInfo
	MapNames []string
	// Progs lists one entry per concrete probe, in source order.
	Progs []*Prog
	// DummyTSMap is the map tseries() reads its time from, for tests
	// (DummyTSMapEnv); "" for the clock.
	DummyTSMap string
	// StackLens is set when len() counts the frames of a stack: then
	// every stack taken records its number of frames.
	StackLens bool
}

// MapInfo describes one map.
type MapInfo struct {
	Name  string
	Key   *Type // nil for a map without keys
	Value *Type
	// KeyNames name the parts of the key as the first keyed use wrote
	// them, where a part is a builtin or a variable ("comm", "pid",
	// "$x"), "" where it is another expression: the labels of a pprof
	// profile.
	KeyNames []string
	// Where the map was first assigned.
	Span token.Span
	// Kind and MaxEntries are those of the map's declaration, `let @a =
	// lruhash(100);`: a Kind* name and its size. Kind is empty for a map
	// not declared.
	Kind       string
	MaxEntries int
	// keyUnknown is set while the map has only been named as a whole.
	keyUnknown bool
	// keyShown is the key as the first use wrote it, before integers
	// were widened for storage: what errors show, as bpftrace does.
	keyShown *Type
}

// Prog is one BPF program to generate: an AST probe bound to one concrete
// attach point. Each has its own type table, because the same action
// block can see different args under different tracepoints.
type Prog struct {
	Probe probe.Probe
	Node  *ast.Probe
	// Attach is the attach point the probe comes from, where errors
	// about the probe as a whole point.
	Attach *ast.AttachPoint
	Types  map[ast.Expr]*Type
	// Vars resolves each use of a $variable to its declaration.
	Vars     map[*ast.Var]*Variable
	Builtins map[*ast.Ident]Builtin
	Funcs    map[*ast.Call]Func
	Args     map[*ast.Field]*ArgField
	// Consts holds the values known at compile time: sizeof, offsetof
	// and kernel enum values.
	Consts map[ast.Expr]int64
	// Members places each field access on a kernel struct or union.
	Members map[*ast.Field]Member
	// Stands holds the expression a builtin or other shorthand stands
	// for, such as ppid's (uint32)curtask->real_parent->pid, or *&$x's
	// $x, which code generation generates in its place.
	Stands map[ast.Expr]ast.Expr
	// Expanded holds, for each errorf() and warnf(), the macro calls it
	// was expanded from, innermost last.
	Expanded map[*ast.Call][]token.Span
	// Retval is where fexit finds the return value; nil elsewhere.
	Retval *ArgField
	// ProbeVaddr is a uprobe's link-time address in a position-independent
	// file, from which uaddr() finds where the file is loaded; 0 elsewhere.
	ProbeVaddr uint64
}

// Variable is one declared scratch variable.
type Variable struct {
	Name string
	Type *Type
}

// ArgField is one field of a tracepoint's args.
type ArgField struct {
	Name    string
	Offset  int
	Size    int // bytes in the record; for __data_loc, the 4-byte locator
	Type    *Type
	DataLoc bool // a __data_loc string: the record holds offset and length
	// InRecord is true for char arrays stored in the record itself.
	InRecord bool
	// From says where a fused syscall probe finds the field, which has
	// no record to read it from.
	From ArgSource
	// Arg is a SyscallArg's argument number.
	Arg int
}

// ArgSource is where a field of args comes from.
type ArgSource int

// The sources of args fields.
const (
	FromRecord ArgSource = iota // the tracepoint's record, at Offset
	SyscallArg                  // a syscall argument, from the saved registers
	SyscallNr                   // the syscall's number
	SyscallRet                  // the syscall's return value
	UprobeArg                   // a uprobe's argument: (Type)argN, N in Arg
)
