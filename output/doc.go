// Package output prints what a gtrace program produces exactly as
// bpftrace v0.26 does, in its text and JSON formats.
//
// The runtime reads BPF maps into a Map (values as Value), then hands it
// to a Printer (NewText or NewJSON). The runtime's maps keep their
// entries in a Source, raw until sorted and printed one at a time, so
// that a map of a million keys is never in memory as Values or text. printf-style builtins go through
// ParseFormat, Format.Check (at type check time) and Format.Sprint;
// time() and strftime() through TimeString and Strftime.
//
// Beyond bpftrace, maps keyed by a stack turn into samples
// (StackSamples) that NewFolded prints as folded stacks (-f folded) and
// that a StackRecorder keeps for the flame graph and pprof files; see
// docs/design.md, "Stack outputs".
//
// Values cross machines, from gtrace agent to the kubectl plugin, as
// WireValue (EncodeValue, DecodeValue), which encoding/json carries
// without loss; AppendValueKey identifies a value by type and contents,
// to match the keys of maps from several machines (package mapmerge).
//
// # Histogram buckets
//
// Entry.Buckets[i] counts the values whose bucket index is i; trailing
// zero buckets may be left out.
//
// hist(v, k): index 0 holds v < 0; indexes 1..2^k hold the values 0..2^k-1,
// one each; after that each power of two [2^p, 2^(p+1)) is split into 2^k
// equal buckets. HistBucket(v, k) computes the index as bpftrace's BPF code
// does. A hist has ((64-k)<<k)+1 buckets.
//
// lhist(v, min, max, step): index 0 holds v < min, index i holds
// [min+(i-1)*step, min+i*step), and the last index, 1+(max-min)/step,
// holds everything from its start up, including v >= max. There are
// 2+(max-min)/step buckets; see LHistBucket.
//
// # Differences from bpftrace 0.17 that gtrace follows
//
// Text: no space after "@h:" before a histogram; stats print as
// "{ .count = N, .average = A, .total = T }"; no empty line after avg
// and stats maps; maps without entries print nothing, but print() of a
// map without keys shows its zero ("@x: 0", as 0.17 does for count maps
// only); histogram bars are
// scaled to the counts after print's div; single-value lhist buckets of
// step 1 print as "[5]"; when step does not divide max-min, the last
// lhist bucket starts where the previous one ends; min and max values
// sort as unsigned numbers (negative last); integer keys sort signed;
// "Lost N events" and, once the probes are attached, "Attached N probes"
// go to stderr.
//
// JSON: attached_probes and lost_events carry a "count" field; histogram
// buckets are separated by "," without a space; map keys lose all
// spaces; integers a float64 cannot hold exactly are quoted; nothing is
// printed at the end of tracing.
//
// printf: v0.26 formats with C++ streams, not C printf. Precision is
// ignored; '0' pads in front of the sign and of "0x"; '-' with '0' pads
// with zeros on the right; ' ' does nothing; %p of 0 is "0"; without a
// length modifier %d/%i convert to 32-bit int and %u/%o/%x/%X to 32-bit
// unsigned; floating-point conversions and %n are rejected. The text
// after the last conversion prints as written, "%%" included, as in
// bpftrace 0.17.
//
// # Where gtrace differs from v0.26 on purpose
//
// JSON strings copy bytes from 0x80 up as they are; bpftrace escapes them
// as "\uffffffXX" (its char is signed), which is not JSON. A width or
// precision above MaxWidth is an error; bpftrace crashes on those that do
// not fit an int and pads to any other. Entries with
// equal sort keys keep the order the runtime gives; bpftrace's std::sort
// does the same for up to 16 entries only.
package output
