package symbol

import (
	"debug/dwarf"
	"debug/elf"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/cilium/ebpf/btf"
)

// DebugDirs are the --debuginfo directories, searched for a stripped
// binary's separate debug file before the standard places. A relative
// directory is taken from the binary's own directory, as elfutils does.
var DebugDirs []string

// Param is one parameter of a function, typed from DWARF.
type Param struct {
	Name string
	Type btf.Type
}

// Debug is a binary's DWARF: its functions' parameters, its named types
// and its line table. Types are given as BTF, which the checker reads
// for kernel types too.
type Debug struct {
	info  *dwarf.Data // types and functions; a split unit's own
	lines *dwarf.Data // the line table, which split DWARF leaves in the binary

	mu    sync.Mutex
	conv  map[dwarf.Type]btf.Type
	funcs map[string]dwarf.Offset
	types map[string]dwarf.Offset
}

// debugCache holds each binary's DWARF, or why it has none, so that the
// probes of a wildcard look once.
var debugCache = struct {
	sync.Mutex
	m map[string]debugResult
}{m: map[string]debugResult{}}

type debugResult struct {
	d   *Debug
	err error
}

// DebugInfo reads the DWARF of the binary at path: its own, a split
// unit's (.dwo or .dwp), or a separate debug file's.
func DebugInfo(path string) (*Debug, error) {
	debugCache.Lock()
	defer debugCache.Unlock()
	if r, ok := debugCache.m[path]; ok {
		return r.d, r.err
	}
	d, err := loadDebug(path)
	if err != nil {
		err = fmt.Errorf("no debuginfo found for %s: %w", path, err)
	}
	debugCache.m[path] = debugResult{d, err}
	return d, err
}

func loadDebug(path string) (*Debug, error) {
	ef, err := elf.Open(path)
	if err != nil {
		return nil, err
	}
	defer ef.Close()
	if ef.Section(".debug_info") == nil {
		sep := separateDebugFile(path, ef)
		if sep == "" {
			return nil, errors.New("it has no .debug_info and no separate debug file was found")
		}
		return loadDebug(sep)
	}
	data, err := ef.DWARF()
	if err != nil {
		return nil, err
	}
	d := &Debug{info: data, lines: data}
	if dwo, base := splitUnit(path, data); dwo != "" {
		info, err := readSplit(dwo, sectionFrom(ef, ".debug_addr", base))
		if err != nil {
			return nil, fmt.Errorf("read split DWARF %s: %w", dwo, err)
		}
		d.info = info
	}
	return d, nil
}

// sectionFrom is the contents of an ELF section from offset off, or nil.
func sectionFrom(ef *elf.File, name string, off int64) []byte {
	s := ef.Section(name)
	if s == nil {
		return nil
	}
	b, err := s.Data()
	if err != nil || off > int64(len(b)) {
		return nil
	}
	return b[off:]
}

// splitUnit is the .dwo or .dwp file holding the types and functions of
// a binary whose first unit is a skeleton, or "", and where the
// skeleton's addresses start in .debug_addr, which the split unit uses.
func splitUnit(path string, data *dwarf.Data) (string, int64) {
	e, err := data.Reader().Next()
	if err != nil || e == nil || e.Tag != dwarf.TagSkeletonUnit && e.Tag != dwarf.TagCompileUnit {
		return "", 0
	}
	base, _ := e.Val(dwarf.AttrAddrBase).(int64)
	dwo := dwoFile(path, e)
	return dwo, base
}

func dwoFile(path string, e *dwarf.Entry) string {
	name, _ := e.Val(dwarf.AttrDwoName).(string)
	if name == "" {
		name, _ = e.Val(0x2130).(string) // DW_AT_GNU_dwo_name
	}
	if name == "" {
		return ""
	}
	if dwp := path + ".dwp"; fileExists(dwp) {
		return dwp
	}
	if !filepath.IsAbs(name) {
		dir, _ := e.Val(dwarf.AttrCompDir).(string)
		name = filepath.Join(dir, name)
	}
	if fileExists(name) {
		return name
	}
	// The object may have moved with the binary.
	if p := filepath.Join(filepath.Dir(path), filepath.Base(name)); fileExists(p) {
		return p
	}
	return ""
}

// readSplit reads the .dwo sections of a split DWARF object or package,
// with the skeleton's addresses. A package holding one unit lays it out
// as an object does.
func readSplit(path string, addrs []byte) (*dwarf.Data, error) {
	ef, err := elf.Open(path)
	if err != nil {
		return nil, err
	}
	defer ef.Close()
	sec := func(name string) []byte {
		s := ef.Section(name + ".dwo")
		if s == nil {
			return nil
		}
		b, _ := s.Data()
		return b
	}
	data, err := dwarf.New(sec(".debug_abbrev"), nil, nil, sec(".debug_info"), nil, nil, nil, sec(".debug_str"))
	if err != nil {
		return nil, err
	}
	// A split unit has no str_offsets_base: its string offsets start
	// after the DWARF 5 section header (length, version, padding).
	if offs := sec(".debug_str_offsets"); len(offs) >= 8 {
		if err := data.AddSection(".debug_str_offsets", offs[8:]); err != nil {
			return nil, err
		}
	}
	if addrs != nil {
		if err := data.AddSection(".debug_addr", addrs); err != nil {
			return nil, err
		}
	}
	return data, nil
}

// separateDebugFile finds the debug file of a stripped binary: named by
// its .gnu_debuglink, or the binary's name with .debug, in the
// --debuginfo directories, the binary's directory, its .debug
// subdirectory and /usr/lib/debug, then by build id.
func separateDebugFile(path string, ef *elf.File) string {
	name := filepath.Base(path) + ".debug"
	if s := ef.Section(".gnu_debuglink"); s != nil {
		if b, err := s.Data(); err == nil {
			if i := strings.IndexByte(string(b), 0); i > 0 {
				name = string(b[:i])
			}
		}
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		abs = path
	}
	bindir := filepath.Dir(path)
	var candidates []string
	for _, dir := range append(append([]string{}, DebugDirs...), "", ".debug", "/usr/lib/debug") {
		switch {
		case dir == "":
			candidates = append(candidates, filepath.Join(bindir, name))
		case filepath.IsAbs(dir):
			candidates = append(candidates, filepath.Join(dir, filepath.Dir(abs), name), filepath.Join(dir, name))
		default:
			candidates = append(candidates, filepath.Join(bindir, dir, name))
		}
	}
	if byID := debugFile(ef); byID != "" {
		candidates = append(candidates, byID)
	}
	for _, c := range candidates {
		if c != path && hasDWARF(c) {
			return c
		}
	}
	return ""
}

func hasDWARF(path string) bool {
	ef, err := elf.Open(path)
	if err != nil {
		return false
	}
	defer ef.Close()
	return ef.Section(".debug_info") != nil
}

func fileExists(path string) bool {
	st, err := os.Stat(path)
	return err == nil && st.Mode().IsRegular()
}

// index records where each function and named type is defined, once.
func (d *Debug) index() {
	if d.funcs != nil {
		return
	}
	d.funcs, d.types = map[string]dwarf.Offset{}, map[string]dwarf.Offset{}
	r := d.info.Reader()
	for {
		e, err := r.Next()
		if err != nil || e == nil {
			return
		}
		if e.Tag == dwarf.TagCompileUnit || e.Tag == dwarf.TagSkeletonUnit {
			continue
		}
		name, _ := e.Val(dwarf.AttrName).(string)
		decl, _ := e.Val(dwarf.AttrDeclaration).(bool)
		if name != "" && !decl {
			d.record(e, name)
		}
		if e.Children {
			r.SkipChildren()
		}
	}
}

// typeKeys spells the types a C name can refer to.
var typeKeys = map[dwarf.Tag]string{
	dwarf.TagStructType:      "struct ",
	dwarf.TagUnionType:       "union ",
	dwarf.TagEnumerationType: "enum ",
	dwarf.TagTypedef:         "",
	dwarf.TagBaseType:        "",
}

func (d *Debug) record(e *dwarf.Entry, name string) {
	if e.Tag == dwarf.TagSubprogram {
		// A C++ function is probed by its mangled name.
		linkage, _ := e.Val(dwarf.AttrLinkageName).(string)
		for _, n := range []string{name, linkage} {
			if _, ok := d.funcs[n]; n != "" && !ok {
				d.funcs[n] = e.Offset
			}
		}
		return
	}
	if prefix, ok := typeKeys[e.Tag]; ok {
		if _, dup := d.types[prefix+name]; !dup {
			d.types[prefix+name] = e.Offset
		}
	}
}

// Params lists the parameters of the function fn, in order.
func (d *Debug) Params(fn string) ([]Param, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.index()
	off, ok := d.funcs[fn]
	if !ok {
		return nil, fmt.Errorf("no DWARF for function %s", fn)
	}
	r := d.info.Reader()
	r.Seek(off)
	e, err := r.Next()
	if err != nil {
		return nil, err
	}
	var params []Param
	for e.Children {
		c, err := r.Next()
		if err != nil {
			return nil, err
		}
		if c == nil || c.Tag == 0 {
			break
		}
		if c.Tag == dwarf.TagFormalParameter {
			name, _ := c.Val(dwarf.AttrName).(string)
			params = append(params, Param{Name: name, Type: d.typeAt(c)})
		}
		if c.Children {
			r.SkipChildren()
		}
	}
	return params, nil
}

// Type finds a type by its C name: "struct Foo", "union U", "enum E",
// or a typedef's or base type's name.
func (d *Debug) Type(name string) (btf.Type, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.index()
	off, ok := d.types[name]
	if !ok {
		return nil, false
	}
	t, err := d.info.Type(off)
	if err != nil {
		return nil, false
	}
	return d.toBTF(t), true
}

// typeAt converts the type of entry e. A C++ reference, which Go's
// debug/dwarf does not read, is passed as a pointer, and becomes one.
func (d *Debug) typeAt(e *dwarf.Entry) btf.Type {
	off, ok := e.Val(dwarf.AttrType).(dwarf.Offset)
	if !ok {
		return &btf.Void{}
	}
	r := d.info.Reader()
	r.Seek(off)
	if te, err := r.Next(); err == nil && te != nil &&
		(te.Tag == dwarf.TagReferenceType || te.Tag == dwarf.TagRvalueReferenceType) {
		return &btf.Pointer{Target: d.typeAt(te)}
	}
	t, err := d.info.Type(off)
	if err != nil {
		return &btf.Void{}
	}
	return d.toBTF(t)
}

// toBTF describes a DWARF type as BTF. Structs, unions and pointers are
// remembered before their parts are converted, for recursive types.
func (d *Debug) toBTF(t dwarf.Type) btf.Type {
	if d.conv == nil {
		d.conv = map[dwarf.Type]btf.Type{}
	}
	if b, ok := d.conv[t]; ok {
		return b
	}
	switch t := t.(type) {
	case *dwarf.StructType:
		return d.record2BTF(t)
	case *dwarf.PtrType:
		p := &btf.Pointer{}
		d.conv[t] = p
		p.Target = d.toBTF(t.Type)
		return p
	case *dwarf.TypedefType:
		td := &btf.Typedef{Name: t.Name}
		d.conv[t] = td
		td.Type = d.toBTF(t.Type)
		return td
	}
	b := d.plainToBTF(t)
	d.conv[t] = b
	return b
}

// plainToBTF converts the types that cannot refer back to themselves.
func (d *Debug) plainToBTF(t dwarf.Type) btf.Type {
	switch t := t.(type) {
	case *dwarf.QualType:
		inner := d.toBTF(t.Type)
		switch t.Qual {
		case "const":
			return &btf.Const{Type: inner}
		case "volatile":
			return &btf.Volatile{Type: inner}
		case "restrict":
			return &btf.Restrict{Type: inner}
		}
		return inner
	case *dwarf.ArrayType:
		n := t.Count
		if n < 0 {
			n = 0
		}
		return &btf.Array{Index: &btf.Int{Name: "long unsigned int", Size: 8}, Type: d.toBTF(t.Type), Nelems: uint32(n)}
	case *dwarf.EnumType:
		e := &btf.Enum{Name: t.EnumName, Size: uint32(t.ByteSize)}
		for _, v := range t.Val {
			e.Values = append(e.Values, btf.EnumValue{Name: v.Name, Value: uint64(v.Val)})
			e.Signed = e.Signed || v.Val < 0
		}
		return e
	case *dwarf.IntType, *dwarf.CharType:
		return &btf.Int{Name: t.Common().Name, Size: uint32(t.Size()), Encoding: btf.Signed}
	case *dwarf.UintType, *dwarf.UcharType:
		return &btf.Int{Name: t.Common().Name, Size: uint32(t.Size())}
	case *dwarf.BoolType:
		return &btf.Int{Name: t.Name, Size: uint32(t.Size()), Encoding: btf.Bool}
	case *dwarf.FloatType:
		return &btf.Float{Name: t.Name, Size: uint32(t.Size())}
	case *dwarf.FuncType:
		fp := &btf.FuncProto{Return: d.toBTF(t.ReturnType)}
		for _, p := range t.ParamType {
			fp.Params = append(fp.Params, btf.FuncParam{Type: d.toBTF(p)})
		}
		return fp
	}
	return &btf.Void{}
}

func (d *Debug) record2BTF(t *dwarf.StructType) btf.Type {
	size := uint32(max(t.ByteSize, 0))
	if t.Kind == "union" {
		u := &btf.Union{Name: t.StructName, Size: size}
		d.conv[t] = u
		u.Members = d.members(t)
		return u
	}
	s := &btf.Struct{Name: t.StructName, Size: size}
	d.conv[t] = s
	s.Members = d.members(t)
	return s
}

func (d *Debug) members(t *dwarf.StructType) []btf.Member {
	var ms []btf.Member
	for _, f := range t.Field {
		m := btf.Member{Name: f.Name, Type: d.toBTF(f.Type), Offset: btf.Bits(f.ByteOffset * 8)}
		if f.BitSize > 0 {
			m.BitfieldSize = btf.Bits(f.BitSize)
			m.Offset = btf.Bits(f.DataBitOffset)
			if f.DataBitOffset == 0 && f.BitOffset != 0 {
				// DWARF 2's offset counts from the storage unit's top.
				m.Offset = btf.Bits(f.ByteOffset*8 + f.ByteSize*8 - f.BitOffset - f.BitSize)
			}
		}
		ms = append(ms, m)
	}
	return ms
}

// CTypeName spells a type as bpftrace lists uprobe arguments: "int",
// "int*", "struct Foo*", "const char*".
func CTypeName(t btf.Type) string {
	switch t := t.(type) {
	case *btf.Pointer:
		return CTypeName(t.Target) + "*"
	case *btf.Const:
		return "const " + CTypeName(t.Type)
	case *btf.Volatile:
		return "volatile " + CTypeName(t.Type)
	case *btf.Restrict:
		return CTypeName(t.Type)
	case *btf.Struct:
		return "struct " + t.Name
	case *btf.Union:
		return "union " + t.Name
	case *btf.Enum:
		return "enum " + t.Name
	case *btf.Array:
		return fmt.Sprintf("%s[%d]", CTypeName(t.Type), t.Nelems)
	case *btf.FuncProto:
		return CTypeName(t.Return) + " (*)()"
	case *btf.Void:
		return "void"
	}
	return t.TypeName()
}

// LineAddress finds the address of the first statement of line (and
// column, when not 0) of the source file whose path ends with file.
func (d *Debug) LineAddress(file string, line, col int) (uint64, error) {
	r := d.lines.Reader()
	var match string
	var cus []*dwarf.Entry
	for {
		e, err := r.Next()
		if err != nil {
			return 0, err
		}
		if e == nil {
			break
		}
		if e.Tag == dwarf.TagCompileUnit || e.Tag == dwarf.TagSkeletonUnit {
			cus = append(cus, e)
		}
		r.SkipChildren()
	}
	var unit *dwarf.LineReader
	for _, cu := range cus {
		lr, err := d.lines.LineReader(cu)
		if err != nil || lr == nil {
			continue
		}
		for _, f := range lr.Files() {
			if f == nil || !pathEndsWith(f.Name, file) || f.Name == match {
				continue
			}
			if match != "" {
				return 0, fmt.Errorf("Ambiguous source path, matches multiple files: %s, %s", match, f.Name)
			}
			match, unit = f.Name, lr
		}
	}
	if unit == nil {
		return 0, fmt.Errorf("No compilation unit matches %s", file)
	}
	var le dwarf.LineEntry
	for unit.Next(&le) == nil {
		if le.File != nil && le.File.Name == match && le.Line == line && (col == 0 || le.Column == col) {
			return le.Address, nil
		}
	}
	where := fmt.Sprintf("%s:%d", file, line)
	if col > 0 {
		where += fmt.Sprintf(":%d", col)
	}
	return 0, fmt.Errorf("Unable to map '%s' to address", where)
}

// pathEndsWith reports whether path ends with the path components of
// suffix.
func pathEndsWith(path, suffix string) bool {
	path, suffix = filepath.Clean(path), filepath.Clean(suffix)
	return path == suffix || strings.HasSuffix(path, "/"+strings.TrimPrefix(suffix, "/"))
}
