package codegen

import (
	"gtrace/lang/token"
	"gtrace/output"
	"gtrace/sema"
)

// EventKind says what a ring buffer record asks user space to do.
type EventKind int

// The events. Every record starts with its event id, a uint64 index into
// Output.Events; the arguments follow at the offsets in Event.Offsets.
const (
	EvPrintf     EventKind = iota
	EvExit                 // Args[0] is the exit code
	EvPrintMap             // print(@m, top, div)
	EvPrintValue           // print(expr)
	EvTime                 // time(format)
	EvClear                // clear(@m)
	EvZero                 // zero(@m)
	EvCat                  // cat(format, args...)
	EvSystem               // system(format, args...)
	EvJoin                 // join(arr, sep): Format is the separator
	// EvWarning is a warning of the running program at At, such as a
	// division by zero: Format is its message until the compiler
	// renders it, located, in its place.
	EvWarning
	// EvHelperError is a failed helper call at At, with -k: Format is
	// the helper's name, and the int64 at Offsets[0] its error code.
	EvHelperError
	// EvErrorf and EvWarnf are errorf() and warnf(): Format is the
	// message's format, At and Expanded its place.
	EvErrorf
	EvWarnf
	// EvSkbOutput is a packet of skboutput(): its time since boot and
	// length, then its bytes; Format is the pcap file, Offset the
	// bytes to leave out of the packet's start.
	EvSkbOutput
)

// Event describes one call site that sends a record to user space.
type Event struct {
	Kind    EventKind
	Format  string       // printf, time, cat and system formats
	Args    []*sema.Type // argument types
	Offsets []int        // argument offsets in the record
	Map     *MapLayout   // the map of print, clear and zero
	Top     int64        // print(@m, top, div)
	Div     int64
	Size    int        // record size in bytes
	At      token.Span // where a warning arises
	// Expanded are the macro calls an errorf() or warnf() is expanded
	// from, innermost last.
	Expanded []token.Span
	Offset   int64 // skboutput()'s offset
	// Where is the rendered place of an errorf() or warnf(): its
	// first line, to which the message is added, then its notes; Loc
	// is the call's place, for JSON output.
	Where string
	Loc   output.Location
	Error bool // an EvWarning that is an error, such as a failed assert()
	// Located is a helper error's warning, rendered by the compiler at
	// its place in the script with output.MessageMark for the message;
	// Loc is that place too.
	Located string
}

// eventHeader is the size of the event id that starts every record.
const eventHeader = 8
