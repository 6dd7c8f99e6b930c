package codegen

import (
	"gtrace/lang/token"
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
	// Located is a helper error's warning, rendered by the compiler at
	// its place in the script with output.MessageMark for the message,
	// and Pos that place.
	Located string
	Pos     token.Position
}

// eventHeader is the size of the event id that starts every record.
const eventHeader = 8
