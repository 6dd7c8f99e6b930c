package output

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"unicode/utf8"
)

// Values travel between machines (gtrace agent to the kubectl plugin)
// as WireValue, which encoding/json writes and reads back exactly.

// WireValue is a Value in a form encoding/json carries without loss.
// Exactly one field is set, named after the value's type; none set is
// the "none" value. Sym sets both Sym and N. Integers are JSON numbers
// of up to 64 bits: read them as int64 or uint64, not as float64.
type WireValue struct {
	Int    *int64       `json:"int,omitempty"`
	Uint   *uint64      `json:"uint,omitempty"`
	Bool   *bool        `json:"bool,omitempty"`
	Str    *WireString  `json:"str,omitempty"`
	Sym    *WireString  `json:"sym,omitempty"`
	N      uint64       `json:"n,omitempty"` // the number of a Sym
	Buf    *[]byte      `json:"buf,omitempty"`
	Tuple  *[]WireValue `json:"tuple,omitempty"`
	Array  *[]WireValue `json:"array,omitempty"`
	Record *[]WireField `json:"record,omitempty"`
	Stack  *WireStack   `json:"stack,omitempty"`
}

// WireField is one member of a record.
type WireField struct {
	Name  WireString `json:"name"`
	Value WireValue  `json:"value"`
}

// WireStack is a stack and the mode it prints in.
type WireStack struct {
	Mode   StackMode   `json:"mode"`
	Frames []WireFrame `json:"frames"`
}

// WireFrame is one Frame.
type WireFrame struct {
	Addr   uint64     `json:"addr"`
	Sym    WireString `json:"sym,omitempty"`
	Func   WireString `json:"func,omitempty"`
	File   WireString `json:"file,omitempty"`
	Kernel bool       `json:"kernel,omitempty"`
}

// WireString is a string that keeps every byte through JSON: valid
// UTF-8 is a JSON string, anything else an object {"base64": "..."}.
// encoding/json alone would replace invalid bytes with U+FFFD, and two
// different keys would become one.
type WireString string

// MarshalJSON writes s as a JSON string, or as base64 if it is not UTF-8.
func (s WireString) MarshalJSON() ([]byte, error) {
	if utf8.ValidString(string(s)) {
		return json.Marshal(string(s))
	}
	return json.Marshal(struct {
		Base64 []byte `json:"base64"`
	}{[]byte(s)})
}

// UnmarshalJSON reads what MarshalJSON writes.
func (s *WireString) UnmarshalJSON(data []byte) error {
	if len(data) > 0 && data[0] == '{' {
		var b struct {
			Base64 []byte `json:"base64"`
		}
		if err := json.Unmarshal(data, &b); err != nil {
			return err
		}
		*s = WireString(b.Base64)
		return nil
	}
	var str string
	if err := json.Unmarshal(data, &str); err != nil {
		return err
	}
	*s = WireString(str)
	return nil
}

// EncodeValue returns v in its wire form.
func EncodeValue(v Value) WireValue {
	var w WireValue
	switch v.tag {
	case tagInt:
		n := int64(v.n)
		w.Int = &n
	case tagUint:
		n := v.n
		w.Uint = &n
	case tagBool:
		b := v.n != 0
		w.Bool = &b
	case tagStr:
		s := WireString(v.s)
		w.Str = &s
	case tagSym:
		s := WireString(v.s)
		w.Sym, w.N = &s, v.n
	case tagBuf:
		b := []byte(v.s)
		w.Buf = &b
	case tagTuple, tagArray:
		elems := make([]WireValue, len(v.elems))
		for i, e := range v.elems {
			elems[i] = EncodeValue(e)
		}
		if v.tag == tagTuple {
			w.Tuple = &elems
		} else {
			w.Array = &elems
		}
	case tagRecord:
		fields := make([]WireField, len(v.fields))
		for i, f := range v.fields {
			fields[i] = WireField{Name: WireString(f.Name), Value: EncodeValue(f.Value)}
		}
		w.Record = &fields
	case tagStack:
		st := &WireStack{Mode: v.mode, Frames: make([]WireFrame, len(v.frames))}
		for i, f := range v.frames {
			st.Frames[i] = WireFrame{Addr: f.Addr, Sym: WireString(f.Sym), Func: WireString(f.Func),
				File: WireString(f.File), Kernel: f.Kernel}
		}
		w.Stack = st
	}
	return w
}

// errWireValue says a wire value sets more than one type's field.
var errWireValue = errors.New("value has more than one type")

// DecodeValue returns the Value w holds.
func DecodeValue(w WireValue) (Value, error) {
	var v Value
	set := 0
	if w.Int != nil {
		v, set = Int(*w.Int), set+1
	}
	if w.Uint != nil {
		v, set = Uint(*w.Uint), set+1
	}
	if w.Bool != nil {
		v, set = Bool(*w.Bool), set+1
	}
	if w.Str != nil {
		v, set = Str(string(*w.Str)), set+1
	}
	if w.Sym != nil {
		v, set = Sym(string(*w.Sym), w.N), set+1
	}
	if w.Buf != nil {
		v, set = Buffer(*w.Buf), set+1
	}
	if w.Tuple != nil || w.Array != nil {
		ws := w.Tuple
		if ws == nil {
			ws = w.Array
		}
		elems := make([]Value, len(*ws))
		for i, e := range *ws {
			var err error
			if elems[i], err = DecodeValue(e); err != nil {
				return Value{}, err
			}
		}
		if w.Tuple != nil {
			v, set = Tuple(elems...), set+1
		}
		if w.Array != nil {
			v, set = Array(elems...), set+1
		}
	}
	if w.Record != nil {
		fields := make([]Field, len(*w.Record))
		for i, f := range *w.Record {
			fv, err := DecodeValue(f.Value)
			if err != nil {
				return Value{}, err
			}
			fields[i] = Field{Name: string(f.Name), Value: fv}
		}
		v, set = Record(fields...), set+1
	}
	if w.Stack != nil {
		if w.Stack.Mode > StackBuildID {
			return Value{}, fmt.Errorf("unknown stack mode %d", w.Stack.Mode)
		}
		frames := make([]Frame, len(w.Stack.Frames))
		for i, f := range w.Stack.Frames {
			frames[i] = Frame{Addr: f.Addr, Sym: string(f.Sym), Func: string(f.Func), File: string(f.File), Kernel: f.Kernel}
		}
		v, set = Stack(w.Stack.Mode, frames), set+1
	}
	if set > 1 {
		return Value{}, errWireValue
	}
	return v, nil
}

// AppendValueKey appends to b bytes that identify v by its type and
// contents: two values append the same bytes if and only if they are
// the same value of the same type. Maps of several machines match their
// keys by it.
func AppendValueKey(b []byte, v Value) []byte {
	b = append(b, byte(v.tag))
	switch v.tag {
	case tagInt, tagUint, tagBool:
		b = binary.BigEndian.AppendUint64(b, v.n)
	case tagStr, tagBuf:
		b = appendKeyString(b, v.s)
	case tagSym:
		b = binary.BigEndian.AppendUint64(b, v.n)
		b = appendKeyString(b, v.s)
	case tagTuple, tagArray:
		b = binary.AppendUvarint(b, uint64(len(v.elems)))
		for _, e := range v.elems {
			b = AppendValueKey(b, e)
		}
	case tagRecord:
		b = binary.AppendUvarint(b, uint64(len(v.fields)))
		for _, f := range v.fields {
			b = appendKeyString(b, f.Name)
			b = AppendValueKey(b, f.Value)
		}
	case tagStack:
		b = append(b, byte(v.mode))
		b = binary.AppendUvarint(b, uint64(len(v.frames)))
		for _, f := range v.frames {
			b = binary.BigEndian.AppendUint64(b, f.Addr)
			b = appendKeyString(b, f.Sym)
			b = appendKeyString(b, f.Func)
			b = appendKeyString(b, f.File)
			if f.Kernel {
				b = append(b, 1)
			} else {
				b = append(b, 0)
			}
		}
	}
	return b
}

func appendKeyString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

// Int64 returns the value of a signed integer, and whether v is one.
func (v Value) Int64() (int64, bool) {
	if v.tag != tagInt {
		return 0, false
	}
	return int64(v.n), true
}

// Uint64 returns the value of an unsigned integer, and whether v is one.
func (v Value) Uint64() (uint64, bool) {
	if v.tag != tagUint {
		return 0, false
	}
	return v.n, true
}
