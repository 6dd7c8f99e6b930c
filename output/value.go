package output

import (
	"fmt"
	"strconv"
	"strings"
)

// StackMode selects how a stack is rendered (bpftrace's stack_mode).
type StackMode uint8

const (
	StackBpftrace StackMode = iota // "        sym" per frame
	StackPerf                      // "\t<hex addr> sym" per frame
	StackRaw                       // "<hex addr>" per frame
	StackBuildID                   // "<build id> 0x<offset>" per frame, in Frame.Sym
)

// Frame is one resolved stack frame.
type Frame struct {
	Addr uint64
	Sym  string // as bpftrace prints the frame, offset and all
	// Func names the frame in folded stacks, flame graphs and pprof
	// profiles: the function without its offset, or the address in hex
	// where no symbol covers it.
	Func string
	// File is the binary a user frame's address is in, when known.
	File string
	// Kernel says the frame is a kernel address.
	Kernel bool
}

// UnwindFailure as a Frame.Addr ends the stack with "<unwind failure>",
// which is how bpftrace shows an address of -1.
const UnwindFailure = ^uint64(0)

// Field is one named member of a Record.
type Field struct {
	Name  string
	Value Value
}

type tag uint8

const (
	tagNone tag = iota
	tagInt
	tagUint
	tagBool
	tagStr
	tagSym
	tagBuf
	tagTuple
	tagArray
	tagRecord
	tagStack
)

// Value is one printable bpftrace value. The zero Value is bpftrace's
// "none" value, printed as null.
type Value struct {
	tag    tag
	n      uint64  // Int (two's complement), Uint, Bool (0/1), Sym number
	s      string  // Str, Sym text, Buffer bytes
	elems  []Value // Tuple, Array
	fields []Field // Record
	frames []Frame // Stack
	mode   StackMode
}

// Int is a signed integer.
func Int(n int64) Value { return Value{tag: tagInt, n: uint64(n)} }

// Uint is an unsigned integer.
func Uint(n uint64) Value { return Value{tag: tagUint, n: n} }

// Bool is a boolean, printed as true/false.
func Bool(b bool) Value {
	v := Value{tag: tagBool}
	if b {
		v.n = 1
	}
	return v
}

// Str is a string. Also use it for values bpftrace resolves to text before
// printing: ksym, usym, inet addresses, usernames, cgroup paths, strftime.
func Str(s string) Value { return Value{tag: tagStr, s: s} }

// Sym is a value with both a symbol and a number, such as an enum member.
// Text output and printf %s show text; JSON and integer conversions use n.
func Sym(text string, n uint64) Value { return Value{tag: tagSym, s: text, n: n} }

// Pointer is a pointer, shown as 0x<hex> in text and as a number in JSON.
func Pointer(p uint64) Value { return Sym("0x"+strconv.FormatUint(p, 16), p) }

// Buffer is the result of buf(): text escapes non-printable bytes as \xNN.
func Buffer(b []byte) Value { return Value{tag: tagBuf, s: string(b)} }

// Tuple is a tuple, shown as (a, b).
func Tuple(elems ...Value) Value { return Value{tag: tagTuple, elems: elems} }

// Array is a C array, shown as [a,b] (no spaces, unlike tuples).
func Array(elems ...Value) Value { return Value{tag: tagArray, elems: elems} }

// Record is a struct, shown as { .a = 1, .b = 2 }.
func Record(fields ...Field) Value { return Value{tag: tagRecord, fields: fields} }

// Stack is a symbolized kernel or user stack.
func Stack(mode StackMode, frames []Frame) Value {
	return Value{tag: tagStack, mode: mode, frames: frames}
}

// String returns the value as bpftrace's text output shows it.
func (v Value) String() string {
	var b strings.Builder
	v.writeText(&b, false)
	return b.String()
}

// writeText writes the text form. plus mirrors a C++ stream with showpos
// set, which printf("%+s") leaves on for every signed number printed.
func (v Value) writeText(b *strings.Builder, plus bool) {
	switch v.tag {
	case tagNone:
		b.WriteString("null")
	case tagInt:
		if plus && int64(v.n) >= 0 {
			b.WriteByte('+')
		}
		b.WriteString(strconv.FormatInt(int64(v.n), 10))
	case tagUint:
		b.WriteString(strconv.FormatUint(v.n, 10))
	case tagBool:
		if v.n != 0 {
			b.WriteString("true")
		} else {
			b.WriteString("false")
		}
	case tagStr, tagSym:
		b.WriteString(v.s)
	case tagBuf:
		b.WriteString(hexBuffer(v.s, true, true))
	case tagTuple:
		b.WriteByte('(')
		for i, e := range v.elems {
			if i > 0 {
				b.WriteString(", ")
			}
			e.writeText(b, plus)
		}
		b.WriteByte(')')
	case tagArray:
		b.WriteByte('[')
		for i, e := range v.elems {
			if i > 0 {
				b.WriteByte(',')
			}
			e.writeText(b, plus)
		}
		b.WriteByte(']')
	case tagRecord:
		if len(v.fields) == 0 {
			b.WriteString("{}")
			return
		}
		b.WriteString("{ ")
		for i, f := range v.fields {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString("." + f.Name + " = ")
			f.Value.writeText(b, plus)
		}
		b.WriteString(" }")
	case tagStack:
		writeStack(b, v.mode, v.frames)
	}
}

// writeStack follows bpftrace's get_stack: a leading newline, then one
// line per frame indented by eight spaces.
func writeStack(b *strings.Builder, mode StackMode, frames []Frame) {
	b.WriteByte('\n')
	for _, f := range frames {
		if f.Addr == UnwindFailure {
			b.WriteString("        <unwind failure>\n")
			return
		}
		switch mode {
		case StackBpftrace:
			b.WriteString("        " + f.Sym + "\n")
		case StackPerf:
			fmt.Fprintf(b, "\t%x %s\n", f.Addr, f.Sym)
		case StackRaw:
			fmt.Fprintf(b, "%x\n", f.Addr)
		case StackBuildID:
			b.WriteString(f.Sym + "\n")
		}
	}
}

// hexBuffer mirrors bpftrace's hex_format_buffer: printable ASCII kept
// (if keepASCII), other bytes as \xNN (if escape) or as space-separated hex.
func hexBuffer(buf string, keepASCII, escape bool) string {
	var b strings.Builder
	for i := 0; i < len(buf); i++ {
		c := buf[i]
		switch {
		case keepASCII && c >= 32 && c <= 126:
			b.WriteByte(c)
		case escape:
			fmt.Fprintf(&b, "\\x%02x", c)
		case i == len(buf)-1:
			fmt.Fprintf(&b, "%02x", c)
		default:
			fmt.Fprintf(&b, "%02x ", c)
		}
	}
	return b.String()
}

// keyText is a map key as printed inside @m[...]: bpftrace drops the
// outer parentheses of whatever the key prints as, tuple or not.
func keyText(key Value) string {
	s := key.String()
	if len(s) >= 2 && s[0] == '(' && s[len(s)-1] == ')' {
		s = s[1 : len(s)-1]
	}
	return s
}
