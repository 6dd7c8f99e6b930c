package sema

import "gtrace/lang/builtin"

// Builtin is a builtin variable such as pid or comm, named by the
// builtin package.
type Builtin = builtin.Var

type builtinSpec struct {
	typ *Type
	// context builtins read the probe's context: only the providers
	// that offer them have them (probe.Probe.Offers).
	context bool
}

// builtins is the table of the builtin variables gtrace implements, keyed
// by the one list of their names. A nil type is filled in by the checker
// (comm's and probe's string sizes, args' record).
var builtins = map[Builtin]builtinSpec{
	builtin.Pid:     {typ: Uint32},
	builtin.Tid:     {typ: Uint32},
	builtin.Uid:     {typ: Uint32},
	builtin.Gid:     {typ: Uint32},
	builtin.Nsecs:   {typ: Uint64}, // CLOCK_BOOTTIME, as v0.26
	builtin.Elapsed: {typ: Uint64},
	builtin.CPU:     {typ: Uint32},
	builtin.Ncpus:   {typ: Uint64},
	builtin.Comm:    {typ: StringType(16)},
	builtin.Kstack:  {typ: KStackT},
	builtin.Args:    {context: true},
	builtin.Probe:   {},
	builtin.Curtask: {typ: Uint64},
	builtin.Cgroup:  {typ: Uint64},
	builtin.Rand:    {typ: Uint32},
	builtin.Cpid:    {typ: Uint32},
	builtin.Numaid:  {typ: Uint32},
	builtin.Jiffies: {typ: Uint64},
	builtin.ArgN:    {typ: Uint64, context: true},
	builtin.Func:    {context: true},
	builtin.Retval:  {typ: Int64, context: true},
	builtin.Ustack:  {typ: UStackT},
	builtin.Ppid:    {typ: Uint32},
	builtin.Pcomm:   {typ: StringType(16)},
	// The standard library's.
	builtin.Ctx:        {},
	builtin.Username:   {},
	builtin.Usermode:   {typ: IntType(1, false)},
	builtin.Probetype:  {},
	builtin.LeaderComm: {},
	builtin.LeaderTid:  {},
	builtin.DwUstack:   {typ: UStackT},
}

// lookupBuiltin returns the builtin variable name spells, or builtin.None
// for one gtrace does not implement.
func lookupBuiltin(name string) Builtin {
	b := builtin.Lookup(name)
	if _, ok := builtins[b]; !ok {
		return builtin.None
	}
	return b
}

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
	FTseries
	FPton
	FMacaddr
	FCgroupPath
	FPercpuKaddr
	FSocketCookie
	FSkboutput
	FWriteUser
	FReg
	FErrorf
	FWarnf
	FDebugf
	FPid
	FTid
	FComm
	FStrlen
	FStrerror
	FSignalName
	FSyscallName
	FStrstr
	FStrConcat
	FMemcmp
	FAssert
	FFind
	FOverride
	FPath
	FSignalThread
	FUnwatch
	FDwUstack
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
	FTseries:     {name: "tseries", minArgs: 3, maxArgs: 4, agg: AggTSeries},

	// Kernel and network helpers, and runtime messages. write_user
	// needs --unsafe too, with its own message.
	FPton:         {name: "pton", minArgs: 1, maxArgs: 1},
	FMacaddr:      {name: "macaddr", minArgs: 1, maxArgs: 1},
	FCgroupPath:   {name: "cgroup_path", minArgs: 1, maxArgs: 2},
	FPercpuKaddr:  {name: "percpu_kaddr", minArgs: 1, maxArgs: 2},
	FSocketCookie: {name: "socket_cookie", minArgs: 1, maxArgs: 1},
	FSkboutput:    {name: "skboutput", minArgs: 4, maxArgs: 4},
	FWriteUser:    {name: "write_user", minArgs: 3, maxArgs: 3},
	FReg:          {name: "reg", minArgs: 1, maxArgs: 1},
	FErrorf:       {name: "errorf", minArgs: 1, maxArgs: 128},
	FWarnf:        {name: "warnf", minArgs: 1, maxArgs: 128},
	FDebugf:       {name: "debugf", minArgs: 1, maxArgs: 128},
	// The standard library's.
	FPid:         {name: "pid", minArgs: 0, maxArgs: 1},
	FTid:         {name: "tid", minArgs: 0, maxArgs: 1},
	FComm:        {name: "comm", minArgs: 0, maxArgs: 1},
	FStrlen:      {name: "strlen", minArgs: 1, maxArgs: 1},
	FStrerror:    {name: "strerror", minArgs: 1, maxArgs: 1},
	FSignalName:  {name: "signal_name", minArgs: 1, maxArgs: 1},
	FSyscallName: {name: "syscall_name", minArgs: 1, maxArgs: 1},
	FStrstr:      {name: "strstr", minArgs: 2, maxArgs: 2},
	FStrConcat:   {name: "str_concat", minArgs: 2, maxArgs: 2},
	FMemcmp:      {name: "memcmp", minArgs: 3, maxArgs: 3},
	FAssert:      {name: "assert", minArgs: 2, maxArgs: 2},
	// override and signal_thread need --unsafe too, with their own
	// messages, after the probe's type is checked.
	FFind:         {name: "find", minArgs: 3, maxArgs: 3},
	FOverride:     {name: "override", minArgs: 1, maxArgs: 1},
	FPath:         {name: "path", minArgs: 1, maxArgs: 2},
	FSignalThread: {name: "signal_thread", minArgs: 1, maxArgs: 1},
	FUnwatch:      {name: "unwatch", minArgs: 1, maxArgs: 1},
	FDwUstack:     {name: "dw_ustack", minArgs: 0, maxArgs: 2},
}

// JoinArgs and JoinArgSize bound join(): the elements read, and the bytes
// kept of each, as bpftrace's join_argnum and join_argsize.
const (
	JoinArgs    = 16
	JoinArgSize = 1024
)

// Clocks are the kernel clocks nsecs(clock) reads; nsecs alone reads boot.
// sw_tai is the boot clock plus TAI's offset from it, measured at start.
var Clocks = []string{"boot", "monotonic", "tai", "sw_tai"}

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
	if builtin.Lookup(name) != builtin.ArgN {
		return 0, false
	}
	return builtin.Index(name)
}
