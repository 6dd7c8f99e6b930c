// Package tools holds gtrace's tools: bpftrace scripts embedded in the
// binary, run by name as `gtrace tools NAME` or through a link named
// after the tool.
//
// A tool is one script, tools/GROUP/NAME.bt. Its first comment says what
// it is:
//
//	/*
//	 * NAME - one line that says what it shows.
//	 *
//	 * Paragraphs that say how, and what it leaves out.
//	 *
//	 * ARGUMENTS:
//	 *     pattern       what an argument is (a section only some tools have)
//	 *
//	 * EXAMPLES:
//	 *     NAME -D 1 5      # what this command line shows
//	 */
//
// Its options are the script's own getopt() calls, with their
// descriptions; BCC's short flags map onto them through one table,
// Flags, and the positional INTERVAL and COUNT onto the options
// interval and count. So a tool runs the same copied out of the binary:
// `gtrace NAME.bt -- --disks --interval=1`.
//
// Where BCC gives a letter another meaning in some tools (-d is a disk
// in biolatency, a duration in funccount), an entry of Flags names the
// tools it is restricted to, and a tool's own entry wins over the
// general one. Two options are the frame's own: folded (-f where a tool
// prints stacks), gtrace's -f folded, which also lets --flamegraph and
// --pprof through, and regexp (-r), which reads a pattern as a regular
// expression.
//
// A tool whose positional arguments are not INTERVAL and COUNT declares
// them in an ARGUMENTS: section, in order, `[name]` for one that may be
// left out and `[name=default]` for one bound to its default then. An
// argument the script reads as an option sets it (profile's duration);
// one called pattern is a BCC probe pattern, translated by AttachPoint
// into the attach point bound to the next positional parameter, $1, $2,
// ...; one called function is too, bound to two, its entry's and its
// return's; one called count_specifier or hist_specifier is an argdist
// specifier, translated by ParseSpecifier into the attach point $1 and
// the bodies of the script's spec_*() macros, which Tool.Script writes
// into the source, as a script cannot take code from a parameter; any
// other is bound as it is. A flag of Flags may give an
// argument instead (profile's -F, its $1), which then has no place of
// its own: `gtrace profile.bt 99 -- --duration=5` runs what `profile -F
// 99 5` does.
package tools
