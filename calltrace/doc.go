// Package calltrace holds recorded kernel function calls, as call trees
// per track, and the file format they are saved in.
//
// A Recording is what `gtrace class` and `gtrace flow` record: tracks
// of calls, each call with its function, entry and exit times, where it
// ran, the fields of the traced object at entry (class) and the calls
// made inside it. A class track is one life of one object; a flow track
// is one thread. A track's calls on one thread nest by time, as a call
// stack does; calls on different threads may overlap (a bio submitted on
// one CPU completes on another), so each thread of a track is its own
// lane. A Builder turns entry and exit events into that shape.
//
// Recordings are saved in the Chrome Trace Event format (JSON object
// form), which Perfetto, speedscope and chrome://tracing open as they
// are:
//
//   - a track is a process: "pid" is the track's ID, named by a
//     process_name metadata event; its lanes are threads: "tid" is the
//     kernel thread ID, named "comm tid" by a thread_name event;
//   - a call is a "B" event at its entry and an "E" event at its exit,
//     "ts" in microseconds (with nanosecond decimals) from the first
//     entry of the recording; the B event's args hold cpu, pid, tid,
//     comm and the object's fields, by name, as text;
//   - a call whose exit was not seen ends where its caller ends, or,
//     outermost, at the last time of its track, with "unfinished": true
//     in its E event's args;
//   - "otherData" says what was recorded: the command, the struct and
//     the names of its fields, and the recording's start in ns.
//
// Graph merges a recording's calls by call path, with the count and the
// total time of each, and WriteGraph prints that as uftrace's graph
// command does.
//
// Check verifies what the format requires of such a file: every B has
// its E on the same lane, nested properly, with times in order.
package calltrace
