package class

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Plan is what to trace: the functions, what each event carries and
// which objects to follow.
type Plan struct {
	Struct string
	Funcs  []Func
	// Fields are paths into the struct, such as "bi_iter.bi_size".
	Fields []string
	// Filter is a predicate on the object, already in terms of $o (see
	// Filter): a life starts only where it holds.
	Filter *Filter
	// Pid, Comm and CPU, when set (CPU >= 0), restrict where a life may
	// start.
	Pid  int
	Comm string
	CPU  int
	// Start lists the functions whose entry begins a new life, even at
	// the address of a live object; End those whose return ends one.
	Start, End []string
	// Multi attaches through kprobe.multi: one program per argument
	// position, one for the returns. Otherwise fentry and fexit, per
	// function.
	Multi bool
	// Duration, when not 0, stops tracing after it.
	Duration time.Duration
}

// MaxLive is how many objects are followed at once.
const MaxLive = 32768

// Event kinds, the first element of every event tuple.
const (
	eventEntry = 1
	eventExit  = 2
	// eventInner is the entry of a call on an object not followed,
	// made inside a recorded call: it pairs the exits that follow.
	eventInner = 3
)

// Roles of functions: whether their entry begins a life, or their
// return ends one.
const (
	rolePlain = iota
	roleStart
	roleEnd
)

var roleNames = [...]string{rolePlain: "", roleStart: "start_", roleEnd: "end_"}

// Script is the bpftrace program of a plan.
type Script struct {
	Text string
	// Probes are the multi-kprobes the program names, by their attach
	// point's text, for sema's Expand.
	Probes map[string][]string
	// regions are the places in Text that hold the user's text.
	regions []region
}

// region is a stretch of the script copied from an option's value:
// script offset i holds the option's byte at pos[i-start].
type region struct {
	start, end int
	option     string
	text       string
	pos        []int
}

// Generate writes the program of p. Every probe sends its event with
// print() of a tuple:
//
//	entry: (1, name, address, new, lane, pid, cpu, comm, nsecs, fields...)
//	inner: (3, name, lane, nsecs)
//	exit:  (2, name, lane, nsecs)
//
// new is 1 when the entry starts a life. name is the probe's name
// ("kprobe:submit_bio", "kretprobe:submit_bio") or, for fentry, the
// function's. lane is the thread's ID, or for the idle threads, which
// all have ID 0, LaneIdle plus the CPU.
//
// A thread's calls of the functions are counted in @depth from the
// first recorded entry until it returns: while the count is not 0, the
// thread's entries of the functions on other objects are sent as inner
// events and all its exits are sent, so that user space pairs every
// exit with its entry; other exits cost no event.
func Generate(p *Plan) *Script {
	s := &Script{Probes: map[string][]string{}}
	var b strings.Builder
	b.WriteString("config = { missing_probes = \"warn\"; max_probes = 1000000 }\n")
	// Lives whose end is not seen stay live until their address starts
	// another: the least recently used go first when the map is full.
	fmt.Fprintf(&b, "let @live = lruhash(%d);\n", MaxLive)
	role := func(f Func) int {
		switch {
		case slices.Contains(p.Start, f.Bare()):
			return roleStart
		case slices.Contains(p.End, f.Bare()):
			return roleEnd
		}
		return rolePlain
	}
	if p.Multi {
		groups := map[[2]int][]string{}
		exits := map[bool][]string{}
		for _, f := range p.Funcs {
			r := role(f)
			groups[[2]int{r, f.Arg}] = append(groups[[2]int{r, f.Arg}], f.Name)
			exits[r == roleEnd] = append(exits[r == roleEnd], f.Name)
		}
		for r := range roleNames {
			for arg := range MaxArg {
				funcs := groups[[2]int{r, arg}]
				if len(funcs) == 0 {
					continue
				}
				ap := fmt.Sprintf("kprobe:gtrace_class_%sarg%d", roleNames[r], arg)
				s.Probes[ap] = funcs
				fmt.Fprintf(&b, "%s {\n\t$o = (struct %s *)arg%d;\n", ap, p.Struct, arg)
				s.entryBody(&b, p, r, "probe")
				b.WriteString("}\n")
			}
		}
		for _, end := range []bool{false, true} {
			if len(exits[end]) == 0 {
				continue
			}
			ap := "kretprobe:gtrace_class_exit"
			if end {
				ap = "kretprobe:gtrace_class_end_exit"
			}
			s.Probes[ap] = exits[end]
			b.WriteString(ap + " {\n")
			s.exitBody(&b, end, "probe")
			b.WriteString("}\n")
		}
	} else {
		for _, f := range p.Funcs {
			name := strconv.Quote(f.Name)
			fmt.Fprintf(&b, "fentry:%s {\n\t$o = (struct %s *)args.%s;\n", f.Name, p.Struct, f.Param)
			s.entryBody(&b, p, role(f), name)
			fmt.Fprintf(&b, "}\nfexit:%s {\n", f.Name)
			s.exitBody(&b, role(f) == roleEnd, name)
			b.WriteString("}\n")
		}
	}
	if p.Duration > 0 {
		fmt.Fprintf(&b, "interval:ms:%d { exit(); }\n", p.Duration.Milliseconds())
	}
	s.Text = b.String()
	return s
}

// LaneIdle plus the CPU is the lane of an idle thread: above any thread
// ID (PID_MAX_LIMIT).
const LaneIdle = 4194304

var laneExpr = "\t$t = tid;\n\tif ($t == 0) {\n\t\t$t = " + strconv.Itoa(LaneIdle) + " + cpu;\n\t}\n"

// entryBody starts a life where the filters allow, and sends the entry
// of a live object, or an inner entry.
func (s *Script) entryBody(b *strings.Builder, p *Plan, role int, name string) {
	b.WriteString("\t$a = (uint64)$o;\n\t$new = 0;\n")
	b.WriteString(laneExpr)
	// A start function begins a life even at a live address: the old
	// life ended unseen.
	indent := "\t"
	if role != roleStart {
		b.WriteString("\tif (@live[$a] == 0) {\n")
		indent = "\t\t"
	}
	var cond strings.Builder
	s.filter(&cond, p, b.Len()+len(indent)+len("if ("))
	if cond.Len() == 0 {
		b.WriteString(indent + "@live[$a] = 1;\n" + indent + "$new = 1;\n")
	} else {
		b.WriteString(indent + "if (" + cond.String() + ") {\n")
		b.WriteString(indent + "\t@live[$a] = 1;\n" + indent + "\t$new = 1;\n")
		if role == roleStart {
			b.WriteString(indent + "} else if (@live[$a] != 0) {\n" + indent + "\tdelete(@live[$a]);\n")
		}
		b.WriteString(indent + "}\n")
	}
	if role != roleStart {
		b.WriteString("\t}\n")
	}
	b.WriteString("\tif (@live[$a] != 0) {\n")
	b.WriteString("\t\t@depth[$t] = @depth[$t] + 1;\n")
	if role == roleEnd {
		b.WriteString("\t\t@ending[$t] = $a;\n")
	}
	fmt.Fprintf(b, "\t\tprint((%d, %s, $a, $new, $t, pid, cpu, comm, nsecs", eventEntry, name)
	for i, f := range p.Fields {
		b.WriteString(", ")
		start := b.Len()
		b.WriteString("$o->" + f)
		pos := make([]int, len(f)+4)
		for j := range pos {
			pos[j] = max(0, j-4)
		}
		s.regions = append(s.regions, region{start: start, end: b.Len(), option: "--fields",
			text: strings.Join(p.Fields, ","), pos: offsetBy(pos, fieldOffset(p.Fields, i))})
	}
	b.WriteString("));\n")
	fmt.Fprintf(b, "\t} else if (@depth[$t] > 0) {\n\t\t@depth[$t] = @depth[$t] + 1;\n\t\tprint((%d, %s, $t, nsecs));\n\t}\n", eventInner, name)
}

// exitBody sends the return of a call paired with a sent entry, and,
// for an end function, ends the life of its object.
func (s *Script) exitBody(b *strings.Builder, end bool, name string) {
	b.WriteString(laneExpr)
	b.WriteString("\t$n = @depth[$t];\n\tif ($n > 0) {\n")
	b.WriteString("\t\tif ($n == 1) {\n\t\t\tdelete(@depth[$t]);\n\t\t} else {\n\t\t\t@depth[$t] = $n - 1;\n\t\t}\n")
	fmt.Fprintf(b, "\t\tprint((%d, %s, $t, nsecs));\n", eventExit, name)
	if end {
		b.WriteString("\t\tif (@ending[$t] != 0) {\n\t\t\tdelete(@live[@ending[$t]]);\n\t\t\tdelete(@ending[$t]);\n\t\t}\n")
	}
	b.WriteString("\t}\n")
}

// filter writes the condition for a life to start, nothing when any
// place may start one; base is where b's text will be in the script.
func (s *Script) filter(b *strings.Builder, p *Plan, base int) {
	var conds []string
	if p.Pid != 0 {
		conds = append(conds, "pid == "+strconv.Itoa(p.Pid))
	}
	if p.Comm != "" {
		conds = append(conds, "comm == "+strconv.Quote(p.Comm))
	}
	if p.CPU >= 0 {
		conds = append(conds, "cpu == "+strconv.Itoa(p.CPU))
	}
	b.WriteString(strings.Join(conds, " && "))
	if p.Filter != nil {
		if len(conds) > 0 {
			b.WriteString(" && ")
		}
		b.WriteString("(")
		start := base + b.Len()
		b.WriteString(p.Filter.expr)
		s.regions = append(s.regions, region{start: start, end: base + b.Len(), option: "--filter",
			text: p.Filter.text, pos: p.Filter.pos})
		b.WriteString(")")
	}
}

// fieldOffset is where the i-th field starts in the comma-joined list.
func fieldOffset(fields []string, i int) int {
	off := 0
	for _, f := range fields[:i] {
		off += len(f) + 1
	}
	return off
}

func offsetBy(pos []int, by int) []int {
	for i := range pos {
		pos[i] += by
	}
	return pos
}
