package output

import (
	"cmp"
	"slices"
	"time"
)

// Printer is one of bpftrace's output formats (-f text or -f json).
type Printer interface {
	// Map prints a map as print(@m, top, div) does; top 0 prints every
	// entry, div 0 divides by 1.
	Map(m *Map, top int, div uint32) error
	// Value prints print(expr) of anything but a whole map.
	Value(v Value) error
	// Printf prints the already formatted result of printf().
	Printf(s string) error
	// Time prints the already formatted result of time().
	Time(s string) error
	// Cat prints the contents read by cat().
	Cat(s string) error
	// Join prints the result of join().
	Join(s string) error
	// Syscall prints the output of a command run by system().
	Syscall(s string) error
	LostEvents(n uint64) error
	// Stats prints what each probe cost, for --stats.
	Stats(stats []ProbeStat, lost uint64) error
	AttachedProbes(n uint64) error
	// HelperError reports a failed helper call (-k).
	HelperError(e *HelperError) error
	// BenchResult prints benchmark index of names: the mean time of
	// one run over iters runs (--mode bench).
	BenchResult(names []string, index int, mean time.Duration, iters uint64) error
	// TestResult prints test index of names: its run time, whether it
	// passed, and out, what it printed (--mode test).
	TestResult(names []string, index int, took time.Duration, passed []bool, out string) error
	// End marks the end of tracing, before maps are printed at exit.
	End() error
}

// PrintExit does what bpftrace does when tracing stops: End, then every
// map in name order.
func PrintExit(p Printer, maps []*Map) error {
	if err := p.End(); err != nil {
		return err
	}
	sorted := slices.Clone(maps)
	slices.SortFunc(sorted, func(a, b *Map) int { return cmp.Compare(a.Name, b.Name) })
	for _, m := range sorted {
		// At exit, as in bpftrace v0.26, a map without entries prints
		// as it is, not as its zero.
		exit := *m
		exit.Zero = nil
		if err := p.Map(&exit, 0, 0); err != nil {
			return err
		}
	}
	return nil
}
