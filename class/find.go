package class

import (
	"fmt"
	"slices"
	"strings"

	"github.com/cilium/ebpf/btf"

	"gtrace/kernel"
)

// Find scans the running kernel for the traceable functions that take
// struct name, keeping those that match one of patterns (bare function
// names with '*' wildcards) when there are any.
func Find(name string, patterns []string) ([]Func, error) {
	names, specs, err := kernel.BTFSpecs()
	if err != nil {
		return nil, err
	}
	traceable, err := kernel.TraceableFunctions()
	if err != nil {
		return nil, err
	}
	all := make([]Spec, len(specs))
	for i := range specs {
		all[i] = Spec{Name: names[i], BTF: specs[i]}
	}
	funcs, err := Scan(name, all, traceable)
	if err != nil {
		return nil, err
	}
	return Select(funcs, patterns), nil
}

// Select keeps the functions whose bare name matches one of patterns;
// all of them when there are no patterns.
func Select(funcs []Func, patterns []string) []Func {
	if len(patterns) == 0 {
		return funcs
	}
	var out []Func
	for _, f := range funcs {
		if slices.ContainsFunc(patterns, func(p string) bool { return kernel.Match(p, f.Bare()) }) {
			out = append(out, f)
		}
	}
	return out
}

// Members returns the names of struct name's members in the running
// kernel, those of its anonymous structs and unions included, as the
// object's fields in a --filter are named.
func Members(name string) (map[string]bool, error) {
	typ, err := kernel.KernelType("struct " + name)
	if err != nil {
		return nil, err
	}
	members := map[string]bool{}
	st, ok := typ.(*btf.Struct)
	if !ok {
		return nil, fmt.Errorf("%s is not a struct", name)
	}
	addMembers(members, st.Members)
	return members, nil
}

func addMembers(into map[string]bool, members []btf.Member) {
	for _, m := range members {
		if m.Name != "" {
			into[m.Name] = true
			continue
		}
		switch in := btf.UnderlyingType(m.Type).(type) {
		case *btf.Struct:
			addMembers(into, in.Members)
		case *btf.Union:
			addMembers(into, in.Members)
		}
	}
}

// Defaults are the fields recorded and the functions that begin and end
// a life, for a struct that the options do not set them for.
type Defaults struct {
	Fields     []string
	Start, End []string
}

// knownDefaults are the defaults of the structs gtrace knows.
var knownDefaults = map[string]Defaults{
	// bio_init starts every bio, allocated or on the stack (as direct
	// I/O's are); bio_put frees an allocated one. A bio on the stack
	// lives until bio_init starts the next at its address. bio_uninit
	// is no end: 6.1's bio_endio calls it before the bio's end_io.
	"bio": {Fields: []string{"bi_iter.bi_sector", "bi_iter.bi_size", "bi_opf"},
		Start: []string{"bio_init"}, End: []string{"bio_put"}},
	"sk_buff": {Fields: []string{"len", "data_len", "protocol"},
		End: []string{"kfree_skbmem"}},
	"request": {Fields: []string{"__sector", "__data_len", "cmd_flags"},
		End: []string{"__blk_mq_free_request"}},
}

// DefaultsFor returns the defaults of struct name: those gtrace knows,
// or, for another struct, no fields, NAME_init as the start and
// NAME_free, __NAME_free, NAME_uninit and NAME_destroy as the ends.
func DefaultsFor(name string) Defaults {
	if d, ok := knownDefaults[name]; ok {
		return d
	}
	return Defaults{Start: []string{name + "_init"},
		End: []string{name + "_free", "__" + name + "_free", name + "_uninit", name + "_destroy"}}
}

// Present keeps the names that are among funcs, by bare name.
func Present(names []string, funcs []Func) []string {
	var out []string
	for _, n := range names {
		if slices.ContainsFunc(funcs, func(f Func) bool { return f.Bare() == n }) {
			out = append(out, n)
		}
	}
	return out
}

// FormatList lists the functions, one a line: name, the argument that
// is the object, and its type when it embeds the struct.
func FormatList(funcs []Func, structName string) string {
	var b strings.Builder
	for _, f := range funcs {
		fmt.Fprintf(&b, "%s arg%d", f.Name, f.Arg)
		if f.Type != structName {
			fmt.Fprintf(&b, " (struct %s)", f.Type)
		}
		b.WriteByte('\n')
	}
	return b.String()
}
