// Package flamegraph draws flame graphs, after Brendan Gregg's
// flamegraph.pl, as one self-contained SVG or HTML file: no external
// script, style or font.
//
// Stacks are merged into a tree whose root, "all", holds their total.
// Each node is a rectangle as wide as its share of the total, children
// sorted by name above their parent, the root at the bottom. Frames
// narrower than a tenth of a pixel are left out, as flamegraph.pl does.
// The colors say where a frame comes from: reds for user code, oranges
// for the kernel, grey for the key's other parts and
// the user/kernel delimiter; a frame's shade is a hash of its name, so
// one function has one color wherever it is.
//
// A short script, embedded, makes it interactive: hovering a frame shows
// its name, value and share at the bottom; clicking one zooms so that it
// spans the whole width, its ancestors dimmed under it, until "Reset
// Zoom" (or a click on "all"); the search box highlights in magenta the
// frames whose names match a regular expression and shows the share
// they cover.
//
// The HTML file is the SVG inline in a page, the same script included.
package flamegraph
