package flamegraph

import (
	"cmp"
	"slices"
)

// Kind says where a frame comes from, which picks its colors.
type Kind uint8

const (
	Other  Kind = iota // the root, a key's other parts, delimiters
	User               // user code
	Kernel             // the kernel
)

// Frame is one frame of a stack.
type Frame struct {
	Name string
	Kind Kind
}

// Stack is a stack, root first, and its value: samples or a sum.
type Stack struct {
	Frames []Frame
	Value  int64
}

// node is a frame of the merged tree: its value is its stacks' total.
type node struct {
	Frame
	value    int64
	children []*node
}

// rootName names the node that holds every stack.
const rootName = "all"

// tree merges stacks into one tree under "all". Stacks of negative
// value count as 0.
func tree(stacks []Stack) *node {
	root := &node{Frame: Frame{Name: rootName}}
	for _, s := range stacks {
		v := max(s.Value, 0)
		n := root
		n.value += v
		for _, f := range s.Frames {
			n = n.child(f)
			n.value += v
		}
	}
	return root
}

// child returns n's child for f, adding it.
func (n *node) child(f Frame) *node {
	for _, c := range n.children {
		if c.Frame == f {
			return c
		}
	}
	c := &node{Frame: f}
	n.children = append(n.children, c)
	return c
}

// Rect is a frame laid out: X and Width in pixels from the left of the
// graph, Depth 0 for the root.
type Rect struct {
	Frame
	Value    int64
	X, Width float64
	Depth    int
}

// minWidth is the width in pixels under which a frame is left out.
const minWidth = 0.1

// layout places the frames of root across width pixels, each as wide as
// its share of the root's value, children left to right by name.
func layout(root *node, width float64) []Rect {
	if root.value == 0 {
		return []Rect{{Frame: root.Frame, Width: width}}
	}
	scale := width / float64(root.value)
	var rects []Rect
	var place func(n *node, x float64, depth int)
	place = func(n *node, x float64, depth int) {
		w := float64(n.value) * scale
		if w < minWidth {
			return
		}
		rects = append(rects, Rect{Frame: n.Frame, Value: n.value, X: x, Width: w, Depth: depth})
		slices.SortFunc(n.children, func(a, b *node) int {
			return cmp.Or(cmp.Compare(a.Name, b.Name), cmp.Compare(a.Kind, b.Kind))
		})
		for _, c := range n.children {
			place(c, x, depth+1)
			x += float64(c.value) * scale
		}
	}
	place(root, 0, 0)
	return rects
}

// Layout places stacks across width pixels: the rectangles of their
// flame graph, the root first and every frame after its parent.
func Layout(stacks []Stack, width float64) []Rect {
	return layout(tree(stacks), width)
}
