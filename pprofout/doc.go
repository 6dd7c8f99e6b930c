// Package pprofout writes maps keyed by a stack as a pprof profile, the
// format of github.com/google/pprof that `go tool pprof` reads.
//
// Each map entry is one sample. Its stack becomes locations, leaf
// first: the user frames, then the kernel frames above them, each with
// its address and its function's name; frames that show_debug_info
// splits into inlined calls share one location with a line each. Kernel
// frames are in the mapping "[kernel.kallsyms]", user frames in a
// mapping per binary ("[unknown]" where no symbol covers the address).
// The mappings say their functions are known, so pprof does not try to
// symbolize them again. The first mapping, which pprof reports as the
// profile's binary, is the user binary of the most locations.
//
// Each map is a sample type named after it: unit "count" for count(),
// "units" for sum() and integers, whose unit only the program knows. A
// sample carries its value under its map's type and 0 under the others.
// The key's other parts become labels named as the program wrote them
// (comm, pid, $x; "key1", "key2", ... for other expressions): integers
// as numeric labels, everything else as text.
package pprofout
