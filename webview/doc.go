// Package webview serves a recording of `gtrace class` or `gtrace flow`
// as a web page: the list of its tracks (objects or threads), and for the
// one selected its timeline, its call tree with durations and the traced
// struct's fields at each call.
//
// The page is three small files embedded in the binary, index.html,
// style.css and app.js: plain HTML, CSS and JavaScript, no framework,
// nothing fetched from elsewhere, so that it works on a machine without
// network access. Every response says so to the browser too: its
// Content-Security-Policy allows only the server's own address.
//
// Handler serves:
//
//   - / the page, and /style.css and /app.js beside it;
//   - /trace.json the recording in the Chrome Trace Event format, as
//     calltrace.WriteChrome writes it (see calltrace/doc.go), which the
//     page reads back into tracks of nested calls, and which can be
//     downloaded from it and opened in Perfetto as it is.
//
// Any other path is 404.
//
// The page lists the tracks with their number of calls and their span
// (first entry to last exit), narrowed by a CPU, a pid and a function
// (a track stays when one of its calls ran there) and by a search of
// function names, field values and track names. Selecting a track draws
// one lane per thread, each call a bar as long as it took, stacked by
// depth, and the call tree as uftrace prints it: nested by depth,
// collapsible, each call with its time from the track's first call,
// CPU, comm, pid/tid and duration ("-" when its return was not seen).
// Calls the filters leave out are greyed, search hits are marked.
// Selecting a call shows where it ran and the struct's fields at its
// entry beside their values at the track's previous call in time; the
// fields that changed are highlighted, and the calls where a field
// changed are marked in the tree. A double click on a bar zooms the
// timeline to its call. The list and the tree draw 1000 rows at a time,
// and the timeline leaves out the bars that would fall on one already
// drawn, so that a recording of a busy machine stays quick to browse.
package webview
