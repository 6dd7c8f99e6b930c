package sema

import (
	"cmp"
	"fmt"
	"strconv"
	"strings"
	"unicode"

	"github.com/cilium/ebpf/btf"

	"gtrace/lang/ast"
)

// Structs, unions and enums defined in a script are parsed from their C
// text into BTF types, laid out as GCC lays them out on x86_64, and take
// precedence over the kernel's types of the same name. Enum values become
// constants.

// cTypes holds a script's own C types.
type cTypes struct {
	types map[string]btf.Type // by C name, such as "struct foo"
	enums map[string]int64
	// enumOf holds the enum of each enumerator, for printing by name.
	enumOf map[string]*btf.Enum
}

// lookupType finds a struct, union or enum by C name: the script's own,
// then the kernel's.
func (c *checker) lookupType(name string) (btf.Type, error) {
	if t, ok := c.ctypes.types[name]; ok {
		return t, nil
	}
	if t, ok := c.userType(name); ok {
		return t, nil
	}
	return c.opts.KernelType(name)
}

// enumValue finds an enum value: the script's own, then the kernel's.
func (c *checker) enumValue(name string) (int64, bool) {
	if v, ok := c.ctypes.enums[name]; ok {
		return v, true
	}
	return c.opts.EnumValue(name)
}

// declareCTypes parses the script's C definitions.
func (c *checker) declareCTypes(prog *ast.Program) {
	c.ctypes = cTypes{types: map[string]btf.Type{}, enums: map[string]int64{}, enumOf: map[string]*btf.Enum{}}
	for _, d := range prog.Preamble {
		if strings.HasPrefix(strings.TrimSpace(d.Text), "#") {
			continue
		}
		p := &cParser{c: c, toks: cTokens(d.Text)}
		if err := p.definition(); err != nil {
			c.errorf(d, "%v", err)
		}
	}
}

// cTokens splits C text into identifiers, numbers and punctuation,
// dropping comments.
func cTokens(s string) []string {
	var toks []string
	for i := 0; i < len(s); {
		r := rune(s[i])
		switch {
		case strings.HasPrefix(s[i:], "//"):
			for i < len(s) && s[i] != '\n' {
				i++
			}
		case strings.HasPrefix(s[i:], "/*"):
			end := strings.Index(s[i+2:], "*/")
			if end < 0 {
				return toks
			}
			i += end + 4
		case unicode.IsSpace(r):
			i++
		case r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
			j := i
			for j < len(s) && (s[j] == '_' || unicode.IsLetter(rune(s[j])) || unicode.IsDigit(rune(s[j]))) {
				j++
			}
			toks = append(toks, s[i:j])
			i = j
		default:
			toks = append(toks, s[i:i+1])
			i++
		}
	}
	return toks
}

type cParser struct {
	c    *checker
	toks []string
	pos  int
}

func (p *cParser) peek() string {
	if p.pos < len(p.toks) {
		return p.toks[p.pos]
	}
	return ""
}

func (p *cParser) next() string {
	t := p.peek()
	p.pos++
	return t
}

func (p *cParser) expect(t string) error {
	if got := p.next(); got != t {
		return fmt.Errorf("C definition: expected %q, found %q", t, got)
	}
	return nil
}

// definition parses `struct|union|enum NAME { ... }`; the parser keeps
// the text of one definition, through its closing brace.
func (p *cParser) definition() error {
	kind := p.next()
	name := p.next()
	if name == "{" && kind == "enum" { // an anonymous enum only names values
		p.pos--
		_, err := p.enumBody("")
		return err
	}
	if name == "{" {
		return fmt.Errorf("C definition: a top-level %s needs a name", kind)
	}
	full := kind + " " + name
	switch kind {
	case "enum":
		t, err := p.enumBody(name)
		if err != nil {
			return err
		}
		p.c.ctypes.types[full] = t
	case "struct", "union":
		// Declared before its body, so that it may point to itself.
		var t btf.Type = &btf.Struct{Name: name}
		if kind == "union" {
			t = &btf.Union{Name: name}
		}
		p.c.ctypes.types[full] = t
		if err := p.recordBody(t); err != nil {
			return err
		}
	default:
		return fmt.Errorf("C definition: expected struct, union or enum, found %q", kind)
	}
	return nil
}

// enumBody parses `{ A, B = 3, ... }` and records the values.
func (p *cParser) enumBody(name string) (*btf.Enum, error) {
	if err := p.expect("{"); err != nil {
		return nil, err
	}
	e := &btf.Enum{Name: name, Size: 4, Signed: true}
	next := int64(0)
	for p.peek() != "}" {
		v := p.next()
		if !isCIdent(v) {
			return nil, fmt.Errorf("C definition: bad enumerator %q in enum %s", v, cmp.Or(name, "{...}"))
		}
		if p.peek() == "=" {
			p.next()
			n, err := p.number()
			if err != nil {
				return nil, err
			}
			next = n
		}
		e.Values = append(e.Values, btf.EnumValue{Name: v, Value: uint64(next)})
		p.c.ctypes.enums[v] = next
		p.c.ctypes.enumOf[v] = e
		next++
		if p.peek() == "," {
			p.next()
		}
	}
	p.next()
	return e, nil
}

// number parses an integer, possibly negative.
func (p *cParser) number() (int64, error) {
	neg := false
	if p.peek() == "-" {
		p.next()
		neg = true
	}
	t := p.next()
	n, err := strconv.ParseInt(strings.TrimRight(t, "uUlL"), 0, 64)
	if err != nil {
		return 0, fmt.Errorf("C definition: expected a number, found %q", t)
	}
	if neg {
		n = -n
	}
	return n, nil
}

// layout places a record's members as GCC does on x86_64.
type layout struct {
	union  bool
	packed bool   // __attribute__((packed)): no padding, byte aligned
	bits   uint64 // the next free bit (struct) or the size (union)
	align  uint64 // bytes
}

// recordBody parses `{ members }` into the struct or union t.
func (p *cParser) recordBody(t btf.Type) error {
	if err := p.expect("{"); err != nil {
		return err
	}
	_, union := t.(*btf.Union)
	body := p.pos
	members, l, err := p.members(t, &layout{union: union, align: 1})
	if err != nil {
		return err
	}
	if p.packed() {
		// The attribute follows the body: lay the members out again.
		end := p.pos
		p.pos = body
		if members, l, err = p.members(t, &layout{union: union, align: 1, packed: true}); err != nil {
			return err
		}
		p.pos = end
	}
	size := (l.bits + 7) / 8
	size = (size + l.align - 1) / l.align * l.align
	switch t := t.(type) {
	case *btf.Struct:
		t.Members, t.Size = members, uint32(size)
	case *btf.Union:
		t.Members, t.Size = members, uint32(size)
	}
	return nil
}

// members parses the members of a struct or union through its '}'.
func (p *cParser) members(t btf.Type, l *layout) ([]btf.Member, *layout, error) {
	var members []btf.Member
	for p.peek() != "}" {
		if p.peek() == "" {
			return nil, nil, fmt.Errorf("C definition: unterminated %s", cName(t))
		}
		ms, err := p.memberLine(l)
		if err != nil {
			return nil, nil, err
		}
		members = append(members, ms...)
	}
	p.next()
	return members, l, nil
}

// packed reads the __attribute__((...)) lists after a body and reports
// whether one says packed; other attributes, such as aligned(1), change
// nothing here.
func (p *cParser) packed() bool {
	packed := false
	for p.peek() == "__attribute__" {
		p.next()
		depth := 0
		for {
			tok := p.next()
			switch tok {
			case "(":
				depth++
			case ")":
				depth--
			case "packed", "__packed__":
				packed = true
			case "":
				return packed
			}
			if depth == 0 {
				break
			}
		}
	}
	return packed
}

// memberLine parses `type declarator, declarator;`, or an anonymous
// struct or union member.
func (p *cParser) memberLine(l *layout) ([]btf.Member, error) {
	base, err := p.baseType()
	if err != nil {
		return nil, err
	}
	var out []btf.Member
	for {
		if p.peek() == ";" { // an anonymous struct or union
			m, err := place(l, "", base, 0)
			if err != nil {
				return nil, err
			}
			out = append(out, m)
			break
		}
		t, name, err := p.declarator(base)
		if err != nil {
			return nil, err
		}
		var bitSize uint64
		if p.peek() == ":" {
			p.next()
			n, err := p.number()
			if err != nil {
				return nil, err
			}
			bitSize = uint64(n)
		}
		m, err := place(l, name, t, bitSize)
		if err != nil {
			return nil, err
		}
		out = append(out, m)
		if p.peek() != "," {
			break
		}
		p.next()
	}
	if p.peek() == "}" { // clang accepts a last member without ';', with a warning
		return out, nil
	}
	return out, p.expect(";")
}

// place lays out one member and returns it.
func place(l *layout, name string, t btf.Type, bitSize uint64) (btf.Member, error) {
	size, err := btf.Sizeof(t)
	if err != nil {
		return btf.Member{}, fmt.Errorf("C definition: the size of %s: %v", name, err)
	}
	align := alignof(t)
	if l.packed {
		align = 1
	}
	l.align = max(l.align, uint64(align))
	unit := uint64(size) * 8
	m := btf.Member{Name: name, Type: t, BitfieldSize: btf.Bits(bitSize)}
	if l.union {
		l.bits = max(l.bits, max(bitSize, unit))
		return m, nil
	}
	start := l.bits
	if bitSize == 0 {
		a := uint64(align) * 8
		start = (start + a - 1) / a * a
		l.bits = start + unit
	} else if start/unit != (start+bitSize-1)/unit {
		// A bit field does not straddle its type's storage unit.
		start = (start + unit - 1) / unit * unit
		l.bits = start + bitSize
	} else {
		l.bits = start + bitSize
	}
	m.Offset = btf.Bits(start)
	return m, nil
}

// declarator parses `*name[N]` around base.
func (p *cParser) declarator(base btf.Type) (btf.Type, string, error) {
	t := base
	for p.peek() == "*" {
		p.next()
		t = &btf.Pointer{Target: t}
		for p.peek() == "const" || p.peek() == "volatile" {
			p.next()
		}
	}
	name := p.next()
	if !isCIdent(name) {
		return nil, "", fmt.Errorf("C definition: expected a member name, found %q", name)
	}
	var dims []uint32
	for p.peek() == "[" {
		p.next()
		n, err := p.number()
		if err != nil {
			return nil, "", err
		}
		dims = append(dims, uint32(n))
		if err := p.expect("]"); err != nil {
			return nil, "", err
		}
	}
	for i := len(dims) - 1; i >= 0; i-- {
		t = &btf.Array{Type: t, Index: &btf.Int{Name: "int", Size: 4}, Nelems: dims[i]}
	}
	return t, name, nil
}

// baseType parses a type specifier: integer keywords, a typedef name of
// the fixed-width kind, or struct, union or enum, with a body or not.
func (p *cParser) baseType() (btf.Type, error) {
	for p.peek() == "const" || p.peek() == "volatile" {
		p.next()
	}
	switch kw := p.peek(); kw {
	case "struct", "union", "enum":
		p.next()
		name := ""
		if p.peek() != "{" {
			name = p.next()
		}
		if p.peek() == "{" {
			var t btf.Type
			switch kw {
			case "struct":
				t = &btf.Struct{Name: name}
			case "union":
				t = &btf.Union{Name: name}
			default:
				return p.enumBody(name)
			}
			if name != "" {
				p.c.ctypes.types[kw+" "+name] = t
			}
			return t, p.recordBody(t)
		}
		t, err := p.c.lookupType(kw + " " + name)
		if err != nil {
			return nil, fmt.Errorf("C definition: %v", err)
		}
		return t, nil
	}
	var words []string
	for cIntWords[p.peek()] {
		words = append(words, p.next())
	}
	if len(words) > 0 {
		return cInt(words)
	}
	name := p.next()
	if t, ok := cTypedefs[name]; ok {
		return t, nil
	}
	if name == "void" {
		return &btf.Void{}, nil
	}
	return nil, fmt.Errorf("C definition: unknown type %q: use an integer type or a struct, union or enum", name)
}

var cIntWords = map[string]bool{"signed": true, "unsigned": true, "char": true, "short": true,
	"int": true, "long": true, "_Bool": true}

// cInt is the integer type named by C's keywords, as on x86_64.
func cInt(words []string) (btf.Type, error) {
	unsigned, longs, size := false, 0, 4
	for _, w := range words {
		switch w {
		case "unsigned":
			unsigned = true
		case "char":
			size = 1
		case "short":
			size = 2
		case "long":
			longs++
			size = 8
		case "_Bool":
			return &btf.Int{Name: "_Bool", Size: 1, Encoding: btf.Bool}, nil
		}
	}
	name := strings.Join(words, " ")
	if size == 1 && len(words) == 1 {
		return &btf.Int{Name: "char", Size: 1, Encoding: btf.Signed}, nil
	}
	enc := btf.Signed
	if unsigned {
		enc = btf.Unsigned
	}
	return &btf.Int{Name: name, Size: uint32(size), Encoding: enc}, nil
}

// cTypedefs are the fixed-width integer names of the kernel and of
// <stdint.h> that scripts use in their definitions.
var cTypedefs = func() map[string]btf.Type {
	m := map[string]btf.Type{}
	for _, bits := range []int{8, 16, 32, 64} {
		u := &btf.Int{Name: fmt.Sprintf("u%d", bits), Size: uint32(bits / 8), Encoding: btf.Unsigned}
		s := &btf.Int{Name: fmt.Sprintf("s%d", bits), Size: uint32(bits / 8), Encoding: btf.Signed}
		for _, n := range []string{"u%d", "__u%d", "uint%d_t"} {
			m[fmt.Sprintf(n, bits)] = u
		}
		for _, n := range []string{"s%d", "__s%d", "int%d_t"} {
			m[fmt.Sprintf(n, bits)] = s
		}
	}
	for _, n := range []string{"size_t", "uintptr_t", "loff_t"} {
		m[n] = &btf.Int{Name: n, Size: 8, Encoding: btf.Unsigned}
	}
	for _, n := range []string{"ssize_t", "intptr_t", "off_t", "pid_t"} {
		m[n] = &btf.Int{Name: n, Size: 8, Encoding: btf.Signed}
	}
	m["pid_t"] = &btf.Int{Name: "pid_t", Size: 4, Encoding: btf.Signed}
	m["bool"] = &btf.Int{Name: "bool", Size: 1, Encoding: btf.Bool}
	return m
}()

func isCIdent(s string) bool {
	if s == "" || !(s[0] == '_' || unicode.IsLetter(rune(s[0]))) {
		return false
	}
	return !cIntWords[s] && s != "struct" && s != "union" && s != "enum"
}

// alignof is a type's alignment on x86_64: a scalar's size, an array's
// element's, a record's largest member's.
func alignof(t btf.Type) int {
	switch t := btf.UnderlyingType(t).(type) {
	case *btf.Array:
		return alignof(t.Type)
	case *btf.Struct, *btf.Union:
		a := 1
		for _, m := range members(t) {
			a = max(a, alignof(m.Type))
		}
		return a
	}
	if n, err := btf.Sizeof(t); err == nil && n > 0 {
		return min(n, 8)
	}
	return 1
}
