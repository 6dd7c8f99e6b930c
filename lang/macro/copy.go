package macro

import (
	"reflect"

	"gtrace/lang/ast"
)

// editFunc sees a node before it is copied; when it returns true, the
// node it returns takes the copy's place.
type editFunc func(ast.Node) (ast.Node, bool)

var nodeType = reflect.TypeFor[ast.Node]()

// copy returns a deep copy of the tree at n, through every field that
// holds a node or a slice of nodes, whatever the node types: a copy
// shares no node with the tree, as the checker keys its findings by
// node. edit, when not nil, sees each node first.
func (x *expander) copy(n ast.Node, edit editFunc) ast.Node {
	v := reflect.ValueOf(n)
	if n == nil || v.Kind() == reflect.Pointer && v.IsNil() {
		return n
	}
	if edit != nil {
		if r, ok := edit(n); ok {
			return r
		}
	}
	x.nodes++
	c := reflect.New(v.Elem().Type())
	c.Elem().Set(v.Elem())
	x.copyFields(c.Elem(), edit)
	return c.Interface().(ast.Node)
}

// copyFields replaces the nodes that the struct s holds by copies.
func (x *expander) copyFields(s reflect.Value, edit editFunc) {
	for i := 0; i < s.NumField(); i++ {
		f := s.Field(i)
		switch {
		case (f.Kind() == reflect.Interface || f.Kind() == reflect.Pointer) && f.Type().Implements(nodeType):
			x.copyInto(f, edit)
		case f.Kind() == reflect.Slice && f.Type().Elem().Implements(nodeType) && !f.IsNil():
			list := reflect.MakeSlice(f.Type(), f.Len(), f.Len())
			for j := 0; j < f.Len(); j++ {
				list.Index(j).Set(f.Index(j))
				x.copyInto(list.Index(j), edit)
			}
			f.Set(list)
		}
	}
}

// copyInto replaces the node in f by its copy. The edits keep the kind
// of the nodes that fields of a node type hold (variables, maps); they
// replace calls and names, which only expression fields hold.
func (x *expander) copyInto(f reflect.Value, edit editFunc) {
	if !f.IsNil() {
		f.Set(reflect.ValueOf(x.copy(f.Interface().(ast.Node), edit)))
	}
}
