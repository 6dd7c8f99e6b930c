// Package runtime runs a compiled script: it loads the collection, runs
// BEGIN, attaches every probe through BPF links, handles the events the
// programs send, and at the end runs END, prints the maps and detaches.
package runtime
