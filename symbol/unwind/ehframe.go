package unwind

import (
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
)

// Kind is how a row finds the canonical frame address.
type Kind uint8

// The kinds of rows.
const (
	None     Kind = iota // no rule gtrace can follow: unwinding stops
	RSP                  // CFA = rsp + CFAOffset
	RBP                  // CFA = rbp + CFAOffset
	DerefRBP             // CFA = *(rbp + CFAOffset), after a stack realignment
)

// Row is the unwind rule in effect from Addr up to the next row's Addr.
type Row struct {
	Addr      uint64
	Kind      Kind
	CFAOffset int32
	// RBPOffset is where rbp is saved, relative to the CFA; 0 when rbp
	// is unchanged.
	RBPOffset int32
}

// same says whether r and o unwind alike, wherever they start.
func (r Row) same(o Row) bool {
	return r.Kind == o.Kind && r.CFAOffset == o.CFAOffset && r.RBPOffset == o.RBPOffset
}

// x86-64 DWARF register numbers.
const (
	regRBP = 6
	regRSP = 7
	regRA  = 16
)

// FileRows reads the .eh_frame of f into rows sorted by address, in the
// file's own virtual addresses. Code no frame description covers gets a
// row of kind None.
func FileRows(f *elf.File) ([]Row, error) {
	if f.Machine != elf.EM_X86_64 {
		return nil, fmt.Errorf("%v: only x86-64 is supported", f.Machine)
	}
	sec := f.Section(".eh_frame")
	if sec == nil || sec.Type == elf.SHT_NOBITS {
		return nil, nil
	}
	data, err := sec.Data()
	if err != nil {
		return nil, fmt.Errorf("read .eh_frame: %w", err)
	}
	fdes, err := parseEhFrame(data, sec.Addr)
	if err != nil {
		return nil, fmt.Errorf(".eh_frame: %w", err)
	}
	return merge(fdes), nil
}

// fde is the rows of one frame description entry, covering [start, end).
type fde struct {
	start, end uint64
	rows       []Row
}

// cie is what a common information entry gives its FDEs.
type cie struct {
	codeAlign uint64
	dataAlign int64
	raReg     uint64
	ptrEnc    byte // the encoding of FDE addresses
	hasAug    bool // 'z': FDEs carry augmentation data
	initial   []byte
}

// parseEhFrame reads every FDE of an .eh_frame section loaded at addr.
func parseEhFrame(data []byte, addr uint64) ([]fde, error) {
	cies := map[int]*cie{}
	var out []fde
	for off := 0; off+4 <= len(data); {
		r := &reader{b: data, pos: off, base: addr}
		length := uint64(r.u32())
		if length == 0 { // the terminator
			break
		}
		if length == 0xffffffff {
			length = r.u64()
		}
		start := r.pos
		end := start + int(length)
		if length > uint64(len(data)) || end > len(data) {
			return nil, fmt.Errorf("entry at %#x: length %d past the section's end", off, length)
		}
		id := r.u32()
		r.b = data[:end]
		if id == 0 {
			c, err := parseCIE(r)
			if err != nil {
				return nil, fmt.Errorf("CIE at %#x: %w", off, err)
			}
			cies[off] = c
		} else {
			c := cies[start-int(id)]
			if c == nil {
				return nil, fmt.Errorf("FDE at %#x: no CIE at %#x", off, start-int(id))
			}
			f, err := parseFDE(r, c)
			if err != nil {
				return nil, fmt.Errorf("FDE at %#x: %w", off, err)
			}
			if f.end > f.start {
				out = append(out, f)
			}
		}
		off = end
	}
	return out, nil
}

func parseCIE(r *reader) (*cie, error) {
	version := r.u8()
	aug := r.cstring()
	c := &cie{ptrEnc: encAbsptr}
	c.codeAlign = r.uleb()
	c.dataAlign = r.sleb()
	if version == 1 {
		c.raReg = uint64(r.u8())
	} else {
		c.raReg = r.uleb()
	}
	if len(aug) > 0 && aug[0] == 'z' {
		c.hasAug = true
		n := r.uleb()
		augEnd := r.pos + int(n)
	augs:
		for _, ch := range aug[1:] {
			switch ch {
			case 'R':
				c.ptrEnc = r.u8()
			case 'P':
				r.pointer(r.u8())
			case 'L':
				r.u8()
			case 'S', 'B':
			default:
				// The data of an unknown augmentation has an unknown
				// size: the length says where the instructions start.
				break augs
			}
		}
		r.pos = augEnd
	} else if aug != "" {
		return nil, fmt.Errorf("augmentation %q not supported", aug)
	}
	if r.err != nil {
		return nil, r.err
	}
	c.initial = r.rest()
	return c, nil
}

func parseFDE(r *reader, c *cie) (fde, error) {
	start := r.pointer(c.ptrEnc)
	size := r.pointer(c.ptrEnc &^ 0x70) // the range is never relative
	if c.hasAug {
		r.pos += int(r.uleb())
	}
	if r.err != nil {
		return fde{}, r.err
	}
	rows, err := run(c, r.rest(), start, r.base)
	if err != nil {
		return fde{}, err
	}
	return fde{start: start, end: start + size, rows: rows}, nil
}

// reader decodes the fields of an entry; the first error sticks.
type reader struct {
	b    []byte
	pos  int
	base uint64 // the address of b[0], for pc-relative pointers
	err  error
}

var errShort = errors.New("entry ends early")

func (r *reader) need(n int) bool {
	if r.err == nil && (n < 0 || r.pos+n > len(r.b) || r.pos < 0) {
		r.err = errShort
	}
	return r.err == nil
}

func (r *reader) u8() byte {
	if !r.need(1) {
		return 0
	}
	r.pos++
	return r.b[r.pos-1]
}

func (r *reader) u16() uint16 {
	if !r.need(2) {
		return 0
	}
	r.pos += 2
	return binary.LittleEndian.Uint16(r.b[r.pos-2:])
}

func (r *reader) u32() uint32 {
	if !r.need(4) {
		return 0
	}
	r.pos += 4
	return binary.LittleEndian.Uint32(r.b[r.pos-4:])
}

func (r *reader) u64() uint64 {
	if !r.need(8) {
		return 0
	}
	r.pos += 8
	return binary.LittleEndian.Uint64(r.b[r.pos-8:])
}

func (r *reader) uleb() uint64 {
	var v uint64
	for shift := uint(0); ; shift += 7 {
		b := r.u8()
		if shift < 64 {
			v |= uint64(b&0x7f) << shift
		}
		if b&0x80 == 0 || r.err != nil {
			return v
		}
	}
}

func (r *reader) sleb() int64 {
	var v int64
	var shift uint
	for {
		b := r.u8()
		if shift < 64 {
			v |= int64(b&0x7f) << shift
		}
		shift += 7
		if b&0x80 == 0 || r.err != nil {
			if shift < 64 && b&0x40 != 0 {
				v |= -1 << shift
			}
			return v
		}
	}
}

func (r *reader) cstring() string {
	start := r.pos
	for r.u8() != 0 && r.err == nil {
	}
	if r.err != nil {
		return ""
	}
	return string(r.b[start : r.pos-1])
}

func (r *reader) block() []byte {
	n := int(r.uleb())
	if !r.need(n) {
		return nil
	}
	r.pos += n
	return r.b[r.pos-n : r.pos]
}

func (r *reader) rest() []byte {
	if r.err != nil || r.pos > len(r.b) {
		return nil
	}
	return r.b[r.pos:]
}

// Pointer encodings (DW_EH_PE_*).
const (
	encAbsptr = 0x00
	encOmit   = 0xff
	encPCRel  = 0x10
)

// pointer reads a pointer of encoding enc, applying pc-relative bases.
func (r *reader) pointer(enc byte) uint64 {
	if enc == encOmit {
		return 0
	}
	at := r.base + uint64(r.pos)
	var v uint64
	switch enc & 0x0f {
	case 0x00, 0x04, 0x0c:
		v = r.u64()
	case 0x01:
		v = r.uleb()
	case 0x09:
		v = uint64(r.sleb())
	case 0x02:
		v = uint64(r.u16())
	case 0x0a:
		v = uint64(int64(int16(r.u16())))
	case 0x03:
		v = uint64(r.u32())
	case 0x0b:
		v = uint64(int64(int32(r.u32())))
	default:
		if r.err == nil {
			r.err = fmt.Errorf("pointer encoding %#x not supported", enc)
		}
	}
	switch enc & 0x70 {
	case encAbsptr:
	case encPCRel:
		v += at
	default:
		if r.err == nil {
			r.err = fmt.Errorf("pointer encoding %#x not supported", enc)
		}
	}
	return v
}
