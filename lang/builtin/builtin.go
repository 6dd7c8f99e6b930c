package builtin

import (
	"strconv"
	"strings"
)

// Var is a builtin variable such as pid or comm.
type Var int

// The builtin variables bpftrace knows. gtrace's checker implements
// most of them; the others are names all the same, which a cast may not
// take.
const (
	None Var = iota
	Pid
	Tid
	Uid
	Gid
	Nsecs
	Elapsed
	CPU
	Ncpus
	Numaid
	Comm
	Kstack
	Ustack
	Args
	ArgN  // arg0, arg1, ...: the traced function's arguments
	SargN // sarg0, sarg1, ...: arguments passed on the stack
	Ctx
	Probe
	Func   // the traced function's name
	Retval // the traced function's return value
	Curtask
	Cgroup
	Cpid
	Rand
	Username
	Jiffies
	Usermode
	Ppid  // the parent's pid
	Pcomm // the parent's comm
	Probetype
	LeaderComm // the comm of the thread group's leader
	LeaderTid  // the thread id of the thread group's leader
	DwUstack   // the user stack, unwound by DWARF call frame information
)

var names = [...]string{
	Pid:      "pid",
	Tid:      "tid",
	Uid:      "uid",
	Gid:      "gid",
	Nsecs:    "nsecs",
	Elapsed:  "elapsed",
	CPU:      "cpu",
	Ncpus:    "ncpus",
	Numaid:   "numaid",
	Comm:     "comm",
	Kstack:   "kstack",
	Ustack:   "ustack",
	Args:     "args",
	ArgN:     "argN",
	SargN:    "sargN",
	Ctx:      "ctx",
	Probe:    "probe",
	Func:     "func",
	Retval:   "retval",
	Curtask:  "curtask",
	Cgroup:   "cgroup",
	Cpid:     "cpid",
	Rand:     "rand",
	Username: "username",
	Jiffies:  "jiffies",
	Usermode: "usermode",
	Ppid:     "ppid",
	Pcomm:    "pcomm",
	// The standard library's.
	Probetype:  "probetype",
	LeaderComm: "leader_comm",
	LeaderTid:  "leader_tid",
	DwUstack:   "dw_ustack",
}

// Lookup returns the builtin variable name spells, or None. arg0, arg1
// and so on are all ArgN; Index returns their number. __builtin_NAME is
// NAME, as bpftrace's standard library spells its builtins.
func Lookup(name string) Var {
	if base, ok := strings.CutPrefix(name, Prefix); ok {
		if v := Lookup(base); v != ArgN && v != SargN && !strings.HasPrefix(base, Prefix) {
			return v
		}
		return None
	}
	if _, ok := Index(name); ok {
		if strings.HasPrefix(name, "s") {
			return SargN
		}
		return ArgN
	}
	for v := Pid; int(v) < len(names); v++ {
		if names[v] == name && v != ArgN && v != SargN {
			return v
		}
	}
	return None
}

// Prefix starts the names bpftrace keeps for its own builtins.
const Prefix = "__builtin_"

// Reserved reports whether name is a builtin variable or in the
// __builtin_ namespace that bpftrace keeps for its own.
func Reserved(name string) bool {
	return Lookup(name) != None || strings.HasPrefix(name, Prefix)
}

// Index returns N for argN and sargN: at most two decimal digits.
func Index(name string) (int, bool) {
	digits, ok := strings.CutPrefix(name, "arg")
	if !ok {
		digits, ok = strings.CutPrefix(name, "sarg")
	}
	if !ok || digits == "" || len(digits) > 2 {
		return 0, false
	}
	n := 0
	for _, c := range digits {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	return n, true
}

// All lists the builtin variables, in the order of their constants.
func All() []Var {
	all := make([]Var, 0, len(names)-1)
	for v := Pid; int(v) < len(names); v++ {
		all = append(all, v)
	}
	return all
}

func (v Var) String() string {
	if v <= None || int(v) >= len(names) {
		return "Var(" + strconv.Itoa(int(v)) + ")"
	}
	return names[v]
}
