package sema

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/cilium/ebpf/btf"
)

// Kind is the kind of a value's type.
type Kind int

// The kinds of value a bpftrace expression can have.
const (
	Invalid Kind = iota
	Void         // statements and functions with no value, such as printf
	Int          // integers of 1, 2, 4 or 8 bytes, signed or not
	Bool
	String // a NUL-terminated byte array of Size bytes
	Tuple
	KStack // a kernel stack, kept as a stack id
	Ksym   // a kernel address, printed as its symbol
	Agg    // an aggregation such as count(); only ever a map's value
	Buffer // buf(): an 8-byte length, then Size-8 bytes, printed escaped
	// Timestamp is strftime()'s nanoseconds since boot, formatted with
	// Format in user space.
	Timestamp
	Inet  // ntop(): an 8-byte address family, then 16 address bytes
	Array // a C array of Len elements of type Elems[0]
	// Pointer is a kernel address; BTF is what it points to.
	Pointer
	// Record is a struct or union of kernel memory; BTF is its type.
	Record
	UStack // a user stack: a stack id, then the process id
	Usym   // usym(): a user address, then the process id
	// MacAddr is macaddr()'s six bytes.
	MacAddr
	// CgroupPath is cgroup_path()'s cgroup id, found in the cgroup
	// hierarchies that Format matches when printed.
	CgroupPath
)

// AggKind says which aggregation a map holds.
type AggKind int

// The aggregations.
const (
	NoAgg AggKind = iota
	AggCount
	AggSum
	AggMin
	AggMax
	AggAvg
	AggStats
	AggHist
	AggLHist
	AggTSeries
)

var aggNames = [...]string{"", "count", "sum", "min", "max", "avg", "stats", "hist", "lhist", "tseries"}

func (a AggKind) String() string { return aggNames[a] }

// Type is the type of an expression, a variable or a map key or value.
type Type struct {
	Kind   Kind
	Size   int // bytes in BPF memory
	Signed bool
	Elems  []*Type // tuple elements
	Agg    AggKind
	// Histogram parameters: the log2 bits of hist(x, k), and lhist's
	// min, max and step, checked to be constants.
	HistBits          int64
	LMin, LMax, LStep int64
	TSeries           *TSeries // tseries()'s parameters
	Format            string   // a Timestamp's strftime format; a stack's mode
	Len               int      // an Array's element count; a stack's frame limit
	BTF               btf.Type // a Pointer's target, a Record's type
	Trim              bool     // a KStack that starts with tracing frames
	// Enum is an Int's enum: printing shows its values by name.
	Enum *btf.Enum
	// Names are a record's field names, one per element; a record is a
	// Tuple whose elements have names.
	Names []string
	// Flex marks a non-negative integer literal, whose sign follows that
	// of the integers it is mixed with (see promoteInt).
	Flex bool
}

// Common types.
var (
	Int64   = &Type{Kind: Int, Size: 8, Signed: true}
	Uint64  = &Type{Kind: Int, Size: 8}
	Uint32  = &Type{Kind: Int, Size: 4}
	Int32   = &Type{Kind: Int, Size: 4, Signed: true}
	BoolT   = &Type{Kind: Bool, Size: 8}
	VoidT   = &Type{Kind: Void}
	KStackT = &Type{Kind: KStack, Size: 8}
	UStackT = &Type{Kind: UStack, Size: 16}
	UsymT   = &Type{Kind: Usym, Size: 16}
	KsymT   = &Type{Kind: Ksym, Size: 8}
	InetT   = &Type{Kind: Inet, Size: 24}
)

// BufferType returns the type of buf() holding up to n bytes.
func BufferType(n int) *Type { return &Type{Kind: Buffer, Size: 8 + n} }

// ArrayType returns the type of a C array of n elements of elem.
func ArrayType(elem *Type, n int) *Type {
	return &Type{Kind: Array, Size: elem.Size * n, Elems: []*Type{elem}, Len: n}
}

// Slot returns t as an 8-byte integer, keeping its sign and enum: the
// type of an integer in a map key or an event.
func Slot(t *Type) *Type {
	return &Type{Kind: Int, Size: 8, Signed: t.Signed, Flex: t.Flex, Enum: t.Enum}
}

// IntType returns the integer type of the given byte size and signedness.
func IntType(size int, signed bool) *Type {
	return &Type{Kind: Int, Size: size, Signed: signed}
}

// EnumType returns the type of a value of enum e: an 8-byte integer
// printed by name.
func EnumType(e *btf.Enum) *Type { return &Type{Kind: Int, Size: 8, Signed: e.Signed, Enum: e} }

// EnumName is the name t's enum gives value v, or "" when t has no enum
// or the enum does not name v.
func (t *Type) EnumName(v uint64) string {
	if t.Enum == nil {
		return ""
	}
	for _, ev := range t.Enum.Values {
		if ev.Value == v {
			return ev.Name
		}
	}
	return ""
}

// StringType returns a string type holding up to n bytes, NUL included.
func StringType(n int) *Type { return &Type{Kind: String, Size: n} }

// TupleType lays out a tuple of the given elements as bpftrace does, as
// C lays out a struct of them: each element on a multiple of its own
// alignment, the whole padded to a multiple of the largest.
func TupleType(elems []*Type) *Type {
	t := &Type{Kind: Tuple, Elems: elems}
	offs := t.Offsets()
	if n := len(elems); n > 0 {
		t.Size = offs[n-1] + elems[n-1].Size
	}
	a := t.Align()
	t.Size = (t.Size + a - 1) / a * a
	return t
}

// RecordType lays out a record: a tuple of named elements.
func RecordType(names []string, elems []*Type) *Type {
	t := TupleType(elems)
	t.Names = names
	return t
}

// FieldIndex returns the element of a tuple named by a field access:
// the decimal index of $t.0, or a record's field name; -1 if none.
func (t *Type) FieldIndex(name string) int {
	if t.Names != nil {
		return slices.Index(t.Names, name)
	}
	i, err := strconv.Atoi(name)
	if err != nil || i < 0 || i >= len(t.Elems) {
		return -1
	}
	return i
}

// Offsets returns the byte offset of each tuple element.
func (t *Type) Offsets() []int {
	offs := make([]int, len(t.Elems))
	off := 0
	for i, e := range t.Elems {
		a := e.Align()
		off = (off + a - 1) / a * a
		offs[i] = off
		off += e.Size
	}
	return offs
}

// Align is the alignment of a value of t in a tuple: an integer's or
// bool's size, a string's 1, an array's element's, a tuple's or
// struct's largest element's (1 for a packed struct), else 8.
func (t *Type) Align() int {
	switch t.Kind {
	case Int, Bool:
		return max(t.Size, 1)
	case String, Void:
		return 1
	case Array:
		return t.Elems[0].Align()
	case Tuple:
		a := 1
		for _, e := range t.Elems {
			a = max(a, e.Align())
		}
		return a
	case Record:
		if a := alignof(t.BTF); t.Size%a == 0 {
			return a
		}
		return 1
	}
	return 8
}

// IsScalar reports whether a value of t fits in a register.
func (t *Type) IsScalar() bool {
	switch t.Kind {
	case Int, Bool, KStack, Ksym, Timestamp, Pointer:
		return true
	}
	return false
}

// Equal reports whether a and b are the same type for map keys and values.
// Strings of different sizes are equal: they are stored at the larger size.
func Equal(a, b *Type) bool {
	if a.Kind != b.Kind {
		return false
	}
	switch a.Kind {
	case Int:
		return true
	case Tuple:
		if len(a.Elems) != len(b.Elems) || (a.Names == nil) != (b.Names == nil) {
			return false
		}
		if a.Names != nil {
			// Records with the same fields in another order are equal:
			// a value converts field by field.
			for i, n := range a.Names {
				j := b.FieldIndex(n)
				if j < 0 || !Equal(a.Elems[i], b.Elems[j]) {
					return false
				}
			}
			return true
		}
		for i := range a.Elems {
			if !Equal(a.Elems[i], b.Elems[i]) {
				return false
			}
		}
	case Agg:
		return a.Agg == b.Agg
	case Timestamp:
		return a.Format == b.Format
	case KStack, UStack:
		return sameStack(a, b)
	case Array:
		return a.Len == b.Len && Equal(a.Elems[0], b.Elems[0])
	case Record:
		return a.Size == b.Size && cName(a.BTF) == cName(b.BTF)
	}
	return true
}

func (t *Type) String() string {
	switch t.Kind {
	case Int:
		if t.Enum != nil {
			return "enum " + t.Enum.Name
		}
		if t.Signed {
			return fmt.Sprintf("int%d", t.Size*8)
		}
		return fmt.Sprintf("uint%d", t.Size*8)
	case Bool:
		return "bool"
	case String:
		return fmt.Sprintf("string[%d]", t.Size)
	case Tuple:
		parts := make([]string, len(t.Elems))
		for i, e := range t.Elems {
			parts[i] = e.String()
			if t.Names != nil {
				parts[i] = t.Names[i] + "=" + parts[i]
			}
		}
		return "(" + strings.Join(parts, ",") + ")"
	case KStack, UStack:
		return stackName(t)
	case Usym:
		return "usym_t"
	case Ksym:
		return "ksym_t"
	case Agg:
		return t.Agg.String() + "_t"
	case Buffer:
		return fmt.Sprintf("buffer[%d]", t.Size-8)
	case Timestamp:
		return "timestamp"
	case Inet:
		return "inet"
	case MacAddr:
		return "macaddr_t"
	case CgroupPath:
		return "cgroup_path_t"
	case Array:
		return fmt.Sprintf("%s[%d]", t.Elems[0], t.Len)
	case Pointer:
		return cName(t.BTF) + " *"
	case Record:
		return cName(t.BTF)
	case Void:
		return "none"
	}
	return "invalid"
}
