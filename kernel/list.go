package kernel

import (
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strconv"
	"strings"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/btf"
)

// Tracepoints lists "category:event" for every tracepoint, from
// available_events, as bpftrace does.
func Tracepoints() ([]string, error) {
	b, err := readTracefs("available_events")
	if err != nil {
		return nil, err
	}
	var out []string
	for _, line := range strings.Split(string(b), "\n") {
		if line = strings.TrimSpace(line); strings.Contains(line, ":") {
			out = append(out, line)
		}
	}
	return out, nil
}

// ExpandTracepoints returns the "category:event" names of the tracepoints
// matching pattern, sorted. It returns no names and no error if nothing
// matches, so the caller can word that error for its context.
func ExpandTracepoints(pattern string) ([]string, error) {
	all, err := Tracepoints()
	if err != nil {
		return nil, err
	}
	return MatchAll(pattern, all), nil
}

// TracepointParams lists the fields of a tracepoint's record as C
// declarations, as -lv shows them.
func TracepointParams(category, event string) ([]string, error) {
	f, err := TracepointFormat(category, event)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, field := range f.Fields {
		out = append(out, field.Decl)
	}
	return out, nil
}

// BTFFunctions lists the traceable functions, all, that fentry can
// bind to: those with a BTF prototype.
func BTFFunctions(all []string) ([]string, error) {
	_, specs, err := kernelSpecs()
	if err != nil {
		return nil, err
	}
	// One pass over the BTF, which the other listings share, costs less
	// than a lookup per function.
	funcs := map[string]bool{}
	for typ, err := range specs[0].All() {
		if err != nil {
			return nil, fmt.Errorf("iterate kernel btf: %w", err)
		}
		if fn, ok := typ.(*btf.Func); ok {
			funcs[fn.Name] = true
		}
	}
	var out []string
	for _, f := range all {
		// Module functions, "module:f", live in the module's BTF.
		if funcs[f] {
			out = append(out, f)
		}
	}
	return out, nil
}

// FuncParams lists a kernel function's parameters as -lv shows them,
// followed by its return value named retval when asked.
func FuncParams(fn string, retval bool) ([]string, error) {
	f, err := KernelFunc(fn)
	if err != nil {
		return nil, err
	}
	proto, ok := f.Type.(*btf.FuncProto)
	if !ok {
		return nil, fmt.Errorf("%s has no prototype", fn)
	}
	var out []string
	for _, p := range proto.Params {
		out = append(out, CDecl(p.Type, p.Name))
	}
	if retval {
		out = append(out, CDecl(proto.Return, "retval"))
	}
	return out, nil
}

// MatchAll returns the sorted, deduplicated elements of all matching
// pattern.
func MatchAll(pattern string, all []string) []string {
	var out []string
	for _, s := range all {
		if Match(pattern, s) {
			out = append(out, s)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// rawTracePrefixes name the BTF functions the kernel generates for every
// tracepoint. bpftrace v0.26 derives raw tracepoints from them rather than
// from btf_trace_* typedefs because their parameters have names.
var rawTracePrefixes = []string{"__probestub_", "__traceiter_"}

// RawTracepoints maps "module:name" of every raw tracepoint in vmlinux
// and module BTF to its arguments, as -lv shows them. Without kernel BTF
// there are none.
func RawTracepoints() (map[string][]string, error) {
	raw := make(map[string][]string)
	names, specs, err := kernelSpecs()
	if errors.Is(err, ebpf.ErrNotSupported) {
		return raw, nil
	}
	if err != nil {
		return nil, err
	}
	for i, spec := range specs {
		if err := addRawTracepoints(raw, names[i], spec); err != nil {
			return nil, err
		}
	}
	return raw, nil
}

// HasRawTracepoint says whether vmlinux or a module has the raw
// tracepoint name, as RawTracepoints would list it, but looking its
// functions up by name: listing them all decodes every type of the
// kernel's BTF, a third of a second and 40 MB, for a script that names
// its raw tracepoints. Modules are looked in only if vmlinux lacks it.
func HasRawTracepoint(name string) (bool, error) {
	spec, err := vmlinux()
	if err != nil {
		return false, fmt.Errorf("kernel BTF: %w", err)
	}
	if hasRawTracepoint(spec, name) {
		return true, nil
	}
	modules, err := btfCache.Modules()
	if err != nil {
		return false, fmt.Errorf("list btf modules: %w", err)
	}
	for _, mod := range modules {
		spec, err := btfCache.Module(mod)
		if err != nil {
			return false, fmt.Errorf("load btf of module %s: %w", mod, err)
		}
		if hasRawTracepoint(spec, name) {
			return true, nil
		}
	}
	return false, nil
}

// hasRawTracepoint says whether spec has a function of rawTracePrefixes
// for the raw tracepoint name that addRawTracepoints would take.
func hasRawTracepoint(spec *btf.Spec, name string) bool {
	for _, prefix := range rawTracePrefixes {
		var fn *btf.Func
		if spec.TypeByName(prefix+name, &fn) != nil {
			continue
		}
		if proto, ok := fn.Type.(*btf.FuncProto); ok && len(proto.Params) > 0 && len(proto.Params) <= maxRegisterArgs() {
			return true
		}
	}
	return false
}

// btfCache holds the kernel's BTF once decoded, for every listing of one
// run: -l '*' lists fentry functions, raw tracepoints and iterators,
// all from it.
var btfCache = btf.NewCache()

// kernelSpecs loads the BTF of vmlinux, named "vmlinux", and of every
// module, named after it.
func kernelSpecs() (names []string, specs []*btf.Spec, err error) {
	vmlinux, err := btfCache.Kernel()
	if err != nil {
		return nil, nil, fmt.Errorf("load kernel btf: %w", err)
	}
	names, specs = []string{"vmlinux"}, []*btf.Spec{vmlinux}
	modules, err := btfCache.Modules()
	if err != nil {
		return nil, nil, fmt.Errorf("list btf modules: %w", err)
	}
	for _, mod := range modules {
		spec, err := btfCache.Module(mod)
		if err != nil {
			return nil, nil, fmt.Errorf("load btf of module %s: %w", mod, err)
		}
		names, specs = append(names, mod), append(specs, spec)
	}
	return names, specs, nil
}

func addRawTracepoints(raw map[string][]string, module string, spec *btf.Spec) error {
	for typ, err := range spec.All() {
		if err != nil {
			return fmt.Errorf("iterate btf of %s: %w", module, err)
		}
		fn, ok := typ.(*btf.Func)
		if !ok {
			continue
		}
		var name string
		for _, prefix := range rawTracePrefixes {
			if n, ok := strings.CutPrefix(fn.Name, prefix); ok {
				name = n
				break
			}
		}
		proto, ok := fn.Type.(*btf.FuncProto)
		if name == "" || !ok || len(proto.Params) == 0 {
			continue
		}
		// bpftrace skips tracepoints whose arguments (plus the leading
		// context pointer) do not fit in registers.
		if len(proto.Params) > maxRegisterArgs() {
			continue
		}
		key := module + ":" + name
		if _, dup := raw[key]; dup {
			continue
		}
		params := []string{}
		for _, p := range proto.Params[1:] {
			params = append(params, CDecl(p.Type, "")+" "+p.Name)
		}
		raw[key] = params
	}
	return nil
}

// maxRegisterArgs is the number of function arguments passed in registers.
func maxRegisterArgs() int {
	switch runtime.GOARCH {
	case "arm64", "loong64", "mips64", "mips64le", "ppc64", "ppc64le", "riscv64":
		return 8
	case "s390x":
		return 5
	case "arm":
		return 4
	default:
		return 6
	}
}

// IsTypePattern reports whether a -l pattern names C types, as in
// "struct task_struct", rather than probes.
func IsTypePattern(pattern string) bool {
	for _, kind := range []string{"struct ", "union ", "enum "} {
		if strings.HasPrefix(pattern, kind) {
			return true
		}
	}
	return false
}

// TypeLister lists the kernel's types, loading its BTF once.
type TypeLister struct {
	// types holds the named structs, unions and enums of the kernel's
	// BTF, loaded by the first pattern, and modules the BTF each is
	// from: "vmlinux" or a module's name.
	types   []btf.Type
	modules []string
}

// List lists the kernel's named structs, unions and enums whose C
// names match pattern, as bpftrace v0.26 does for -l 'struct X'. Verbose
// listings show each type's definition instead, laid out as libbpf's
// btf_dump prints it, followed by an empty line. Like bpftrace, a verbose
// pattern with a wildcard is matched against the whole definition with
// " *{*}*" appended. A pattern without a wildcard that names no type is an
// error, where bpftrace prints nothing.
func (l *TypeLister) List(pattern string, verbose bool) ([]string, error) {
	if l.types == nil {
		if err := l.loadTypes(); err != nil {
			return nil, err
		}
	}
	var all []string
	// from is the BTF each definition in all comes from.
	from := map[string]string{}
	known := false
	for i, typ := range l.types {
		name := typeName(typ)
		known = known || name == pattern
		if !verbose {
			all = append(all, name)
			continue
		}
		// Without a wildcard, only a definition that begins
		// "pattern {" can match.
		if HasWildcard(pattern) || name == pattern {
			def := typeDef(typ)
			// bpftrace takes definitions from a dump of the whole
			// BTF by their first line, which must end in '{': empty
			// structs ("struct x {};") and enums are left out.
			if first, _, _ := strings.Cut(def, "\n"); strings.HasSuffix(first, "{") {
				all = append(all, def)
				from[def] = l.modules[i]
			}
		}
	}
	in := pattern
	if verbose {
		in += " *{*}*"
	}
	found := MatchAll(in, all)
	if !known && !HasWildcard(pattern) {
		return nil, fmt.Errorf("%s is not in the kernel's BTF", pattern)
	}
	if !verbose {
		return found, nil
	}
	var out []string
	for _, def := range found {
		// As bpftrace, named by the BTF it is from.
		out = append(out, strings.Split(from[def]+": "+def, "\n")...)
		out = append(out, "")
	}
	return out, nil
}

// loadTypes collects the named structs, unions and enums of vmlinux and
// of the modules' BTF.
func (l *TypeLister) loadTypes() error {
	l.types = []btf.Type{}
	names, specs, err := kernelSpecs()
	if err != nil {
		return err
	}
	// A module's split BTF holds vmlinux's types too: each type is
	// listed once, from the first BTF that has it.
	seen := map[btf.Type]bool{}
	for i, spec := range specs {
		for typ, err := range spec.All() {
			if err != nil {
				return fmt.Errorf("iterate kernel btf: %w", err)
			}
			switch typ.(type) {
			case *btf.Struct, *btf.Union, *btf.Enum:
				if typ.TypeName() != "" && !seen[typ] {
					seen[typ] = true
					l.types = append(l.types, typ)
					l.modules = append(l.modules, names[i])
				}
			}
		}
	}
	return nil
}

// typeName is the C name of a struct, union or enum: "struct list_head".
func typeName(typ btf.Type) string {
	switch typ.(type) {
	case *btf.Struct:
		return "struct " + typ.TypeName()
	case *btf.Union:
		return "union " + typ.TypeName()
	}
	return "enum " + typ.TypeName()
}

// typeDef renders the definition of a struct, union or enum as libbpf's
// btf_dump does (its code is followed closely here, so that listings match
// bpftrace's): members indented by tabs, anonymous structs, unions and
// enums inlined, explicit padding ("long: 64;") for holes the compiler
// would not leave by itself, and bit fields ("u8 flag: 1;").
func typeDef(typ btf.Type) string {
	var d cdump
	if e, ok := typ.(*btf.Enum); ok {
		d.enumDef(e, 0)
	} else {
		d.structDef(typ, 0)
	}
	d.WriteString(";")
	return d.String()
}

// ptrSize is the size of a kernel pointer, in bytes.
const ptrSize = strconv.IntSize / 8

// cdump writes C declarations the way libbpf's btf_dump does.
type cdump struct {
	strings.Builder
}

func (d *cdump) printf(format string, args ...any) {
	fmt.Fprintf(d, format, args...)
}

// indent is btf_dump's prefix for nesting level lvl: a tab per level, up
// to thirteen.
func indent(lvl int) string {
	return strings.Repeat("\t", min(lvl, 13))
}

// structDef is btf_dump_emit_struct_def.
func (d *cdump) structDef(typ btf.Type, lvl int) {
	var kind string
	var size int
	var members []btf.Member
	switch t := typ.(type) {
	case *btf.Struct:
		kind, size, members = "struct", int(t.Size), t.Members
	case *btf.Union:
		kind, size, members = "union", int(t.Size), t.Members
	}
	packed := kind == "struct" && isPacked(members, size)

	d.WriteString(kind)
	if name := typ.TypeName(); name != "" {
		d.WriteString(" " + name)
	}
	d.WriteString(" {")
	off, prevBitfield := 0, false
	for _, m := range members {
		mOff, mSize := int(m.Offset), int(m.BitfieldSize)
		mAlign := 1
		if !packed {
			mAlign = alignOf(m.Type)
		}
		d.bitPadding(off, mOff, mAlign, prevBitfield && mSize != 0, lvl+1)
		d.WriteString("\n" + indent(lvl+1))
		d.typeDecl(m.Type, m.Name, lvl+1)
		if mSize != 0 {
			d.printf(": %d", mSize)
			off = mOff + mSize
			prevBitfield = true
		} else {
			n, _ := btf.Sizeof(m.Type)
			off = mOff + max(n, 0)*8
			prevBitfield = false
		}
		d.WriteString(";")
	}
	if kind == "struct" {
		d.bitPadding(off, size*8, alignOf(typ), false, lvl+1)
	}
	if len(members) > 0 || size > 0 {
		d.WriteString("\n" + indent(lvl) + "}")
	} else {
		d.WriteString("}")
	}
	if packed {
		d.WriteString(" __attribute__((packed))")
	}
}

// isPacked is btf_is_struct_packed: a struct is packed if a member that
// is not a bit field is misaligned, or its size is not a multiple of its
// alignment.
func isPacked(members []btf.Member, size int) bool {
	maxAlign := 1
	for _, m := range members {
		align := alignOf(m.Type)
		if align != 0 && m.BitfieldSize == 0 && int(m.Offset)%(8*align) != 0 {
			return true
		}
		maxAlign = max(maxAlign, align)
	}
	return size%maxAlign != 0
}

// alignOf is libbpf's btf__align_of, 0 for types without an alignment.
func alignOf(typ btf.Type) int {
	switch t := typ.(type) {
	case *btf.Int:
		return min(ptrSize, int(t.Size))
	case *btf.Enum:
		return min(ptrSize, int(t.Size))
	case *btf.Float:
		return min(ptrSize, int(t.Size))
	case *btf.Pointer:
		return ptrSize
	case *btf.Typedef:
		return alignOf(t.Type)
	case *btf.Volatile:
		return alignOf(t.Type)
	case *btf.Const:
		return alignOf(t.Type)
	case *btf.Restrict:
		return alignOf(t.Type)
	case *btf.TypeTag:
		return alignOf(t.Type)
	case *btf.Array:
		return alignOf(t.Type)
	case *btf.Struct:
		return membersAlign(t.Members, int(t.Size))
	case *btf.Union:
		return membersAlign(t.Members, int(t.Size))
	}
	return 0
}

func membersAlign(members []btf.Member, size int) int {
	maxAlign := 1
	for _, m := range members {
		align := alignOf(m.Type)
		if align <= 0 {
			return 0
		}
		maxAlign = max(maxAlign, align)
		// A misaligned member means the struct is packed.
		if m.BitfieldSize == 0 && int(m.Offset)%(8*align) != 0 {
			return 1
		}
	}
	if size%maxAlign != 0 {
		return 1
	}
	return maxAlign
}

// bitPadding is btf_dump_emit_bit_padding: it fills the hole from bit
// curOff to nextOff with unnamed bit fields, where the compiler would not
// leave it by itself.
func (d *cdump) bitPadding(curOff, nextOff, nextAlign int, inBitfield bool, lvl int) {
	pads := []struct {
		name string
		bits int
	}{{"long", ptrSize * 8}, {"int", 32}, {"short", 16}, {"char", 8}}
	if curOff >= nextOff {
		return
	}
	var padType string
	var padBits, newOff int
	for _, p := range pads {
		padType, padBits = p.name, p.bits
		newOff = roundUp(curOff, padBits)
		if newOff <= nextOff {
			break
		}
	}
	if newOff > curOff && newOff <= nextOff {
		if inBitfield ||
			(newOff == nextOff && roundUp(curOff, nextAlign*8) != newOff) ||
			(newOff != nextOff && nextOff-newOff <= newOff-curOff) {
			n := 0
			if inBitfield {
				n = newOff - curOff
			}
			d.printf("\n%s%s: %d;", indent(lvl), padType, n)
		}
		curOff = newOff
	}
	for curOff != nextOff {
		bits := min(nextOff-curOff, padBits)
		if bits == padBits {
			d.printf("\n%s%s: %d;", indent(lvl), padType, padBits)
			curOff += bits
			continue
		}
		// The rest, with the smallest type that holds it.
		for i := len(pads) - 1; i >= 0; i-- {
			padType, padBits = pads[i].name, pads[i].bits
			if padBits < bits {
				continue
			}
			d.printf("\n%s%s: %d;", indent(lvl), padType, bits)
			curOff += bits
			break
		}
	}
}

func roundUp(x, y int) int {
	return (x + y - 1) / y * y
}

// enumDef is btf_dump_emit_enum_def. cilium/ebpf reads BTF_KIND_ENUM64 as
// an Enum of size 8, and so does this.
func (d *cdump) enumDef(e *btf.Enum, lvl int) {
	d.WriteString("enum")
	if e.Name != "" {
		d.WriteString(" " + e.Name)
	}
	if len(e.Values) == 0 {
		return
	}
	d.WriteString(" {")
	enum64 := e.Size == 8
	for _, v := range e.Values {
		d.printf("\n%s%s = ", indent(lvl+1), v.Name)
		switch {
		case enum64 && e.Signed:
			d.printf("%dLL,", int64(v.Value))
		case enum64:
			d.printf("%dULL,", v.Value)
		case e.Signed:
			d.printf("%d,", int32(v.Value))
		default:
			d.printf("%d,", uint32(v.Value))
		}
	}
	d.WriteString("\n" + indent(lvl) + "}")
	if e.Size == 1 {
		d.WriteString(" __attribute__((mode(byte)))")
	} else if e.Size == 8 && ptrSize == 8 {
		// Only an enum whose values all fit in 32 bits needs the
		// attribute to be 8 bytes wide.
		word := true
		for _, v := range e.Values {
			if v.Value>>32 != 0 {
				word = false
			}
		}
		if word {
			d.WriteString(" __attribute__((mode(word)))")
		}
	}
}

// typeDecl is btf_dump_emit_type_decl: it declares name with type typ.
func (d *cdump) typeDecl(typ btf.Type, name string, lvl int) {
	// The chain of types from the declared one to the base type: the
	// base is last, and emitted first.
	var decls []btf.Type
	for typ != nil {
		decls = append(decls, typ)
		switch t := typ.(type) {
		case *btf.Pointer:
			typ = t.Target
		case *btf.Volatile:
			typ = t.Type
		case *btf.Const:
			typ = t.Type
		case *btf.Restrict:
			typ = t.Type
		case *btf.TypeTag:
			typ = t.Type
		case *btf.FuncProto:
			typ = t.Return
		case *btf.Array:
			typ = t.Type
		default:
			typ = nil
		}
	}
	d.typeChain(&decls, name, lvl)
}

// isMod reports whether typ is a qualifier or a type tag.
func isMod(typ btf.Type) bool {
	switch typ.(type) {
	case *btf.Volatile, *btf.Const, *btf.Restrict, *btf.TypeTag:
		return true
	}
	return false
}

// mods is btf_dump_emit_mods: the qualifiers of a base type, before it.
func (d *cdump) mods(decls *[]btf.Type) {
	for len(*decls) > 0 {
		switch (*decls)[len(*decls)-1].(type) {
		case *btf.Volatile:
			d.WriteString("volatile ")
		case *btf.Const:
			d.WriteString("const ")
		case *btf.Restrict:
			d.WriteString("restrict ")
		default:
			return
		}
		*decls = (*decls)[:len(*decls)-1]
	}
}

// dropMods drops the qualifiers GCC adds to arrays and to functions.
func dropMods(decls *[]btf.Type) {
	for len(*decls) > 0 && isMod((*decls)[len(*decls)-1]) {
		*decls = (*decls)[:len(*decls)-1]
	}
}

func (d *cdump) name(name string, lastWasPtr bool) {
	if name != "" && !lastWasPtr {
		d.WriteString(" ")
	}
	d.WriteString(name)
}

// typeChain is btf_dump_emit_type_chain: it pops decls from the base type
// outwards, writing the declaration of name.
func (d *cdump) typeChain(decls *[]btf.Type, name string, lvl int) {
	lastWasPtr := true
	for len(*decls) > 0 {
		typ := (*decls)[len(*decls)-1]
		*decls = (*decls)[:len(*decls)-1]
		switch t := typ.(type) {
		case *btf.Void:
			d.mods(decls)
			d.WriteString("void")
		case *btf.Int, *btf.Float, *btf.Typedef:
			d.mods(decls)
			d.WriteString(typ.TypeName())
		case *btf.Struct, *btf.Union:
			d.mods(decls)
			if typ.TypeName() == "" {
				d.structDef(typ, lvl)
			} else {
				d.WriteString(typeName(typ))
			}
		case *btf.Enum:
			d.mods(decls)
			if t.Name == "" {
				d.enumDef(t, lvl)
			} else {
				d.WriteString("enum " + t.Name)
			}
		case *btf.Fwd:
			d.mods(decls)
			if t.Kind == btf.FwdUnion {
				d.WriteString("union " + t.Name)
			} else {
				d.WriteString("struct " + t.Name)
			}
		case *btf.Pointer:
			if lastWasPtr {
				d.WriteString("*")
			} else {
				d.WriteString(" *")
			}
		case *btf.Volatile:
			d.WriteString(" volatile")
		case *btf.Const:
			d.WriteString(" const")
		case *btf.Restrict:
			d.WriteString(" restrict")
		case *btf.TypeTag:
			d.mods(decls)
			d.printf(" __attribute__((btf_type_tag(\"%s\")))", t.Value)
		case *btf.Array:
			dropMods(decls)
			if len(*decls) == 0 {
				d.name(name, lastWasPtr)
				d.printf("[%d]", t.Nelems)
				return
			}
			_, multidim := (*decls)[len(*decls)-1].(*btf.Array)
			if name != "" && !lastWasPtr {
				d.WriteString(" ")
			}
			if !multidim {
				d.WriteString("(")
			}
			d.typeChain(decls, name, lvl)
			if !multidim {
				d.WriteString(")")
			}
			d.printf("[%d]", t.Nelems)
			return
		case *btf.FuncProto:
			dropMods(decls)
			if len(*decls) > 0 {
				d.WriteString(" (")
				d.typeChain(decls, name, lvl)
				d.WriteString(")")
			} else {
				d.name(name, lastWasPtr)
			}
			d.WriteString("(")
			params := t.Params
			if len(params) == 0 || (len(params) == 1 && isVoid(params[0].Type)) {
				d.WriteString("void)")
				return
			}
			for i, p := range params {
				if i > 0 {
					d.WriteString(", ")
				}
				if i == len(params)-1 && isVoid(p.Type) {
					d.WriteString("...")
					break
				}
				d.typeDecl(p.Type, p.Name, lvl)
			}
			d.WriteString(")")
			return
		}
		_, lastWasPtr = typ.(*btf.Pointer)
	}
	d.name(name, lastWasPtr)
}

func isVoid(typ btf.Type) bool {
	_, ok := typ.(*btf.Void)
	return ok
}

// Iterators lists the BPF iterators the kernel's BTF describes, by the
// name of their context struct, bpf_iter__NAME, as bpftrace lists them.
func Iterators() ([]string, error) {
	_, specs, err := kernelSpecs()
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	var out []string
	for _, spec := range specs {
		for typ, err := range spec.All() {
			if err != nil {
				return nil, fmt.Errorf("iterate kernel btf: %w", err)
			}
			s, ok := typ.(*btf.Struct)
			if !ok {
				continue
			}
			// The verifier's bpf_iter__task__safe_trusted is no iterator.
			name, ok := strings.CutPrefix(s.Name, "bpf_iter__")
			if ok && !strings.HasSuffix(name, "__safe_trusted") && !seen[name] {
				seen[name] = true
				out = append(out, name)
			}
		}
	}
	slices.Sort(out)
	return out, nil
}
