package class

import (
	"fmt"
	"slices"
	"strings"

	"github.com/cilium/ebpf/btf"
)

// MaxArg is the number of leading parameters searched for the object:
// arg0 to arg4.
const MaxArg = 5

// Func is a kernel function that takes the traced struct.
type Func struct {
	// Name is the function as tracefs lists it: "name", or
	// "module:name" for a module's.
	Name string
	// Arg is the position of its first parameter that points to the
	// struct, from 0.
	Arg int
	// Param is that parameter's name, by which fentry reads it.
	Param string
	// Type is the struct the parameter points to: the traced one, or
	// one that has it as its first member.
	Type string
	// Fentry says whether fentry and fexit can bind to it: at most
	// MaxFentryArgs parameters, none of them, nor the result, a
	// struct or union passed by value.
	Fentry bool
}

// MaxFentryArgs is the most parameters a function may have for an
// fentry trampoline on x86-64 before Linux 6.5.
const MaxFentryArgs = 6

// Bare is the function's name without its module.
func (f Func) Bare() string {
	if i := strings.LastIndex(f.Name, ":"); i >= 0 {
		return f.Name[i+1:]
	}
	return f.Name
}

// Spec is one BTF to scan, named "vmlinux" or after its module.
type Spec struct {
	Name string
	BTF  *btf.Spec
}

// Scan finds the functions of traceable (tracefs' names) that take, in
// one of their first MaxArg parameters, a pointer to struct target or to
// a struct that begins with it, in the kernel's and modules' BTF. They
// come back sorted by name.
func Scan(target string, specs []Spec, traceable []string) ([]Func, error) {
	listed := make(map[string]bool, len(traceable))
	for _, f := range traceable {
		listed[f] = true
	}
	types, err := embedders(target, specs)
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	var out []Func
	for _, s := range specs {
		for typ, err := range s.BTF.All() {
			if err != nil {
				return nil, fmt.Errorf("iterate btf of %s: %w", s.Name, err)
			}
			fn, ok := typ.(*btf.Func)
			if !ok {
				continue
			}
			name := fn.Name
			if s.Name != "vmlinux" {
				name = s.Name + ":" + fn.Name
			}
			// __bpf_trace_* pass tracepoints' arguments to BPF programs:
			// BPF's plumbing, not the object's way through the kernel.
			if seen[name] || !listed[name] || strings.HasPrefix(fn.Name, "__bpf_trace_") {
				continue
			}
			if f, ok := match(fn, types); ok {
				f.Name = name
				seen[name] = true
				out = append(out, f)
			}
		}
	}
	slices.SortFunc(out, func(a, b Func) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

// match reports whether fn takes a pointer to one of types, and where.
func match(fn *btf.Func, types map[string]bool) (Func, bool) {
	proto, ok := fn.Type.(*btf.FuncProto)
	if !ok {
		return Func{}, false
	}
	for i, p := range proto.Params {
		if i == MaxArg {
			break
		}
		ptr, ok := btf.UnderlyingType(p.Type).(*btf.Pointer)
		if !ok {
			continue
		}
		s, ok := btf.UnderlyingType(ptr.Target).(*btf.Struct)
		if ok && types[s.Name] {
			return Func{Arg: i, Param: p.Name, Type: s.Name, Fentry: fentryBinds(proto)}, true
		}
	}
	return Func{}, false
}

// fentryBinds reports whether a trampoline can pass the function's
// parameters and result: registers only.
func fentryBinds(proto *btf.FuncProto) bool {
	if len(proto.Params) > MaxFentryArgs {
		return false
	}
	types := []btf.Type{proto.Return}
	for _, p := range proto.Params {
		if p.Name == "" {
			return false // fentry's args name them
		}
		types = append(types, p.Type)
	}
	for _, t := range types {
		switch btf.UnderlyingType(t).(type) {
		case *btf.Struct, *btf.Union, *btf.Float:
			return false
		}
	}
	return true
}

// embedders returns the names of target and of the structs whose first
// member is target, or a struct whose first member is, and so on: a
// pointer to any of them is a pointer to target.
func embedders(target string, specs []Spec) (map[string]bool, error) {
	// first maps a struct to the struct that is its first member.
	first := map[string]string{}
	found := false
	for _, s := range specs {
		for typ, err := range s.BTF.All() {
			if err != nil {
				return nil, fmt.Errorf("iterate btf of %s: %w", s.Name, err)
			}
			st, ok := typ.(*btf.Struct)
			if !ok || st.Name == "" {
				continue
			}
			if st.Name == target {
				found = true
			}
			if len(st.Members) == 0 || st.Members[0].Offset != 0 {
				continue
			}
			if in, ok := btf.UnderlyingType(st.Members[0].Type).(*btf.Struct); ok && in.Name != "" {
				first[st.Name] = in.Name
			}
		}
	}
	if !found {
		return nil, fmt.Errorf("struct %s is not in the kernel's BTF", target)
	}
	types := map[string]bool{target: true}
	for name := range first {
		// Follow the chain of first members; a chain is as long as the
		// nesting, so a bound on it only guards against a loop.
		for in, n := first[name], 0; in != "" && n < 32; in, n = first[in], n+1 {
			if in == target {
				types[name] = true
				break
			}
		}
	}
	return types, nil
}
