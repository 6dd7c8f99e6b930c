package calltrace

import (
	"fmt"
	"io"
	"strings"
)

// GraphNode is one call path, merged over every call that took it, as
// uftrace's graph shows calls: a function called from the same chain of
// callers is one node however often it was called.
type GraphNode struct {
	Func string
	// Count is how many calls took this path.
	Count int
	// Total is their time in ns; a call whose return was not seen adds
	// nothing.
	Total uint64
	// Calls are the paths one call deeper, in the order they were first
	// taken.
	Calls []*GraphNode
}

// Graph merges the calls of every track by their call path. The roots
// are the outermost calls, by function, in the order first called.
func (r *Recording) Graph() []*GraphNode {
	root := &GraphNode{}
	var add func(parent *GraphNode, c *Call)
	add = func(parent *GraphNode, c *Call) {
		n := parent.child(c.Func)
		n.Count++
		n.Total += uint64(c.Duration())
		for _, in := range c.Calls {
			add(n, in)
		}
	}
	for _, t := range r.Tracks {
		for _, c := range t.Calls {
			add(root, c)
		}
	}
	return root.Calls
}

// child returns n's child for fn, adding it if there is none.
func (n *GraphNode) child(fn string) *GraphNode {
	for _, c := range n.Calls {
		if c.Func == fn {
			return c
		}
	}
	c := &GraphNode{Func: fn}
	n.Calls = append(n.Calls, c)
	return c
}

// WriteGraph prints roots as uftrace's graph does: a line per node with
// its total time, "(count) function" and the tree drawn to its left. A
// node's only callee goes under it, in the same column; several callees
// each open a column with "+-", and "|" runs down it to the next.
func WriteGraph(w io.Writer, roots []*GraphNode) error {
	var b strings.Builder
	b.WriteString("# TOTAL TIME   FUNCTION\n")
	var write func(n *GraphNode, prefix, lead string)
	write = func(n *GraphNode, prefix, lead string) {
		fmt.Fprintf(&b, "%10s : %s(%d) %s\n", formatDuration(n.Total), prefix, n.Count, n.Func)
		if len(n.Calls) == 1 {
			write(n.Calls[0], lead, lead)
			return
		}
		for i, c := range n.Calls {
			last := i == len(n.Calls)-1
			next := lead + " | "
			if last {
				next = lead + "   "
			}
			write(c, lead+" +-", next)
			if !last && len(c.Calls) > 0 {
				fmt.Fprintf(&b, "%10s : %s\n", "", strings.TrimRight(lead+" |", " "))
			}
		}
	}
	for i, n := range roots {
		if i > 0 {
			b.WriteByte('\n')
		}
		write(n, "", "")
	}
	_, err := io.WriteString(w, b.String())
	return err
}
