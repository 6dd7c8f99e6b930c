package sema

import (
	"strconv"
	"strings"

	"gtrace/probe"
)

// Builtin is a builtin variable such as pid or comm.
type Builtin int

// The builtin variables.
const (
	NoBuiltin Builtin = iota
	BPid
	BTid
	BUid
	BGid
	BNsecs
	BElapsed
	BCPU
	BComm
	BKstack
	BArgs
	BProbe
	BCurtask
	BCgroup
	BRand
	BCpid
	BNumaid
	BJiffies
	BArgN   // arg0, arg1, ...: a raw tracepoint's arguments
	BFunc   // the traced function's name
	BRetval // the traced function's return value
	BUstack // the user stack
)

type builtinSpec struct {
	name string
	typ  *Type
	// probes lists the providers that may use it; nil means any.
	probes []probe.Kind
}

// builtins is the one table of builtin variables. A nil type is filled in
// by the checker (comm's and probe's string sizes, args' record).
var builtins = [...]builtinSpec{
	BPid:     {name: "pid", typ: Uint32},
	BTid:     {name: "tid", typ: Uint32},
	BUid:     {name: "uid", typ: Uint32},
	BGid:     {name: "gid", typ: Uint32},
	BNsecs:   {name: "nsecs", typ: Uint64}, // CLOCK_BOOTTIME, as v0.26
	BElapsed: {name: "elapsed", typ: Uint64},
	BCPU:     {name: "cpu", typ: Uint32},
	BComm:    {name: "comm", typ: StringType(16)},
	BKstack:  {name: "kstack", typ: KStackT},
	BArgs:    {name: "args", probes: []probe.Kind{probe.Tracepoint, probe.Fentry, probe.Fexit}},
	BProbe:   {name: "probe"},
	BCurtask: {name: "curtask", typ: Uint64},
	BCgroup:  {name: "cgroup", typ: Uint64},
	BRand:    {name: "rand", typ: Uint32},
	BCpid:    {name: "cpid", typ: Uint32},
	BNumaid:  {name: "numaid", typ: Uint32},
	BJiffies: {name: "jiffies", typ: Uint64},
	BArgN:    {name: "argN", typ: Uint64, probes: []probe.Kind{probe.RawTracepoint, probe.Kprobe, probe.Uprobe, probe.Usdt}},
	BFunc: {name: "func", probes: []probe.Kind{probe.Kprobe, probe.Kretprobe, probe.Fentry, probe.Fexit,
		probe.Uprobe, probe.Uretprobe}},
	BRetval: {name: "retval", typ: Int64, probes: []probe.Kind{probe.Kretprobe, probe.Fexit, probe.Uretprobe}},
	BUstack: {name: "ustack", typ: UStackT},
}

func lookupBuiltin(name string) Builtin {
	if _, ok := ArgIndex(name); ok {
		return BArgN
	}
	for b := BPid; int(b) < len(builtins); b++ {
		if builtins[b].name == name {
			return b
		}
	}
	return NoBuiltin
}

func (b Builtin) String() string { return builtins[b].name }

// Func is a builtin function such as printf or count.
type Func int

// The builtin functions.
const (
	NoFunc Func = iota
	FPrintf
	FPrint
	FTime
	FStrftime
	FExit
	FStr
	FKsym
	FKaddr
	FBswap
	FCat
	FSystem
	FSignal
	FStrncmp
	FCount
	FSum
	FAvg
	FMin
	FMax
	FStats
	FHist
	FLhist
	FDelete
	FClear
	FZero
	FLen
	FHasKey
	FBuf
	FNtop
	FJoin
	FNsecs
	FStrcontains
	FKstack
	FUstack
	FUsym
	FUaddr
)

type funcSpec struct {
	name             string
	minArgs, maxArgs int
	// unsafe functions change the system and need --unsafe.
	unsafe bool
	// agg is the aggregation the function computes; such a call may
	// only be assigned to a map.
	agg AggKind
}

// funcs is the one table of builtin functions; the checker gives each its
// type rule and codegen its code, both indexed by Func.
var funcs = [...]funcSpec{
	FPrintf:      {name: "printf", minArgs: 1, maxArgs: 64},
	FPrint:       {name: "print", minArgs: 1, maxArgs: 3},
	FTime:        {name: "time", minArgs: 0, maxArgs: 1},
	FStrftime:    {name: "strftime", minArgs: 2, maxArgs: 2},
	FExit:        {name: "exit", minArgs: 0, maxArgs: 1},
	FStr:         {name: "str", minArgs: 1, maxArgs: 2},
	FKsym:        {name: "ksym", minArgs: 1, maxArgs: 1},
	FKaddr:       {name: "kaddr", minArgs: 1, maxArgs: 1},
	FBswap:       {name: "bswap", minArgs: 1, maxArgs: 1},
	FCat:         {name: "cat", minArgs: 1, maxArgs: 64},
	FSystem:      {name: "system", minArgs: 1, maxArgs: 64, unsafe: true},
	FSignal:      {name: "signal", minArgs: 1, maxArgs: 1, unsafe: true},
	FStrncmp:     {name: "strncmp", minArgs: 3, maxArgs: 3},
	FCount:       {name: "count", minArgs: 0, maxArgs: 0, agg: AggCount},
	FSum:         {name: "sum", minArgs: 1, maxArgs: 1, agg: AggSum},
	FAvg:         {name: "avg", minArgs: 1, maxArgs: 1, agg: AggAvg},
	FMin:         {name: "min", minArgs: 1, maxArgs: 1, agg: AggMin},
	FMax:         {name: "max", minArgs: 1, maxArgs: 1, agg: AggMax},
	FStats:       {name: "stats", minArgs: 1, maxArgs: 1, agg: AggStats},
	FHist:        {name: "hist", minArgs: 1, maxArgs: 2, agg: AggHist},
	FLhist:       {name: "lhist", minArgs: 4, maxArgs: 4, agg: AggLHist},
	FDelete:      {name: "delete", minArgs: 1, maxArgs: 2},
	FClear:       {name: "clear", minArgs: 1, maxArgs: 1},
	FZero:        {name: "zero", minArgs: 1, maxArgs: 1},
	FLen:         {name: "len", minArgs: 1, maxArgs: 1},
	FHasKey:      {name: "has_key", minArgs: 2, maxArgs: 2},
	FBuf:         {name: "buf", minArgs: 1, maxArgs: 2},
	FNtop:        {name: "ntop", minArgs: 1, maxArgs: 2},
	FJoin:        {name: "join", minArgs: 1, maxArgs: 2},
	FNsecs:       {name: "nsecs", minArgs: 0, maxArgs: 1},
	FStrcontains: {name: "strcontains", minArgs: 2, maxArgs: 2},
	FKstack:      {name: "kstack", minArgs: 0, maxArgs: 2},
	FUstack:      {name: "ustack", minArgs: 0, maxArgs: 2},
	FUsym:        {name: "usym", minArgs: 1, maxArgs: 1},
	FUaddr:       {name: "uaddr", minArgs: 1, maxArgs: 1},
}

// JoinArgs and JoinArgSize bound join(): the elements read, and the bytes
// kept of each, as bpftrace's join_argnum and join_argsize.
const (
	JoinArgs    = 16
	JoinArgSize = 1024
)

// Clocks are the kernel clocks nsecs(clock) reads; nsecs alone reads boot.
var Clocks = []string{"boot", "monotonic", "tai"}

func lookupFunc(name string) Func {
	for f := FPrintf; int(f) < len(funcs); f++ {
		if funcs[f].name == name {
			return f
		}
	}
	return NoFunc
}

func (f Func) String() string { return funcs[f].name }

// Unsafe reports whether f needs --unsafe.
func (f Func) Unsafe() bool { return funcs[f].unsafe }

// Agg is the aggregation f computes, or NoAgg.
func (f Func) Agg() AggKind { return funcs[f].agg }

// AllFuncs lists every builtin function, for tests that walk the table.
func AllFuncs() []Func {
	var all []Func
	for f := FPrintf; int(f) < len(funcs); f++ {
		all = append(all, f)
	}
	return all
}

// ArgIndex returns N for the builtin argN.
func ArgIndex(name string) (int, bool) {
	digits, ok := strings.CutPrefix(name, "arg")
	if !ok || digits == "" || len(digits) > 2 {
		return 0, false
	}
	n, err := strconv.Atoi(digits)
	return n, err == nil && n >= 0
}
