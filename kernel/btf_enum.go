package kernel

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"os"
	"sync"

	"github.com/cilium/ebpf/btf"
	"golang.org/x/sys/unix"
)

// EnumValue finds the value of a kernel enum member, such as
// SKB_DROP_REASON_NOT_SPECIFIED, by name.
func EnumValue(name string) (int64, bool) {
	return kernelEnums().value(name)
}

// enumIndex holds the values of the enums of a BTF blob, by the offset
// of their names in its string table: a value later in the blob wins.
// Looking a name up finds its offset in the table.
type enumIndex struct {
	strs []byte
	vals map[uint32]int64
	// byName is the fallback where the raw BTF could not be read: the
	// values of cilium/ebpf's decoding of every type.
	byName map[string]int64
}

func (x *enumIndex) value(name string) (int64, bool) {
	if x.byName != nil {
		v, ok := x.byName[name]
		return v, ok
	}
	if name == "" {
		return 0, false
	}
	// Strings are NUL-terminated, the table starts with the empty one:
	// a whole string follows a NUL.
	needle := append(append([]byte{0}, name...), 0)
	for from := 0; ; {
		i := bytes.Index(x.strs[from:], needle)
		if i < 0 {
			return 0, false
		}
		off := uint32(from + i + 1)
		if v, ok := x.vals[off]; ok {
			return v, true
		}
		from += i + 1
	}
}

// kernelEnums indexes the enums of /sys/kernel/btf/vmlinux, read raw:
// decoding every type into cilium/ebpf's, as spec.All() does, takes a
// third of a second and 30 MB, and even a map by name, a string for
// every value, costs more than this index, for the few constants a
// script names.
// The file is mapped as cilium/ebpf maps it (read(2) goes a page at a
// time), for as long as gtrace runs. Without it, the kernel's BTF as
// cilium/ebpf finds it is decoded after all.
var kernelEnums = sync.OnceValue(func() *enumIndex {
	if x, err := vmlinuxEnums(); err == nil {
		return x
	}
	x := &enumIndex{byName: map[string]int64{}}
	// Not vmlinux(), which starts this: without the file, loading is
	// rare and slow anyway.
	spec, err := btf.LoadKernelSpec()
	if err != nil {
		return x
	}
	for typ := range spec.All() {
		if e, ok := typ.(*btf.Enum); ok {
			for _, v := range e.Values {
				x.byName[v.Name] = int64(v.Value)
			}
		}
	}
	return x
})

func vmlinuxEnums() (*enumIndex, error) {
	f, err := os.Open("/sys/kernel/btf/vmlinux")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, err
	}
	raw, err := unix.Mmap(int(f.Fd()), 0, int(info.Size()), unix.PROT_READ, unix.MAP_PRIVATE)
	if err != nil {
		if raw, err = io.ReadAll(f); err != nil {
			return nil, err
		}
	}
	return rawEnums(raw)
}

// BTF kinds that have data after their 12-byte header, from
// include/uapi/linux/btf.h.
const (
	btfKindInt      = 1
	btfKindArray    = 3
	btfKindStruct   = 4
	btfKindUnion    = 5
	btfKindEnum     = 6
	btfKindProto    = 13
	btfKindVar      = 14
	btfKindDatasec  = 15
	btfKindDeclTag  = 17
	btfKindEnum64   = 19
	btfMagic        = 0xeb9f
	btfHeaderMinLen = 24
)

// rawEnums indexes the enum values of raw, a BTF blob of this machine's
// byte order (little endian).
func rawEnums(raw []byte) (*enumIndex, error) {
	le := binary.LittleEndian
	if len(raw) < btfHeaderMinLen || le.Uint16(raw) != btfMagic {
		return nil, errors.New("no BTF header of this byte order")
	}
	hdrLen := uint64(le.Uint32(raw[4:]))
	typeOff, typeLen := uint64(le.Uint32(raw[8:])), uint64(le.Uint32(raw[12:]))
	strOff, strLen := uint64(le.Uint32(raw[16:])), uint64(le.Uint32(raw[20:]))
	if hdrLen+typeOff+typeLen > uint64(len(raw)) || hdrLen+strOff+strLen > uint64(len(raw)) {
		return nil, errors.New("BTF sections out of bounds")
	}
	types := raw[hdrLen+typeOff : hdrLen+typeOff+typeLen]
	x := &enumIndex{strs: raw[hdrLen+strOff : hdrLen+strOff+strLen], vals: map[uint32]int64{}}
	for off := 0; off < len(types); {
		if off+12 > len(types) {
			return nil, errors.New("truncated type")
		}
		info := le.Uint32(types[off+4:])
		kind, vlen, signed := info>>24&0x1f, int(info&0xffff), info>>31 == 1
		off += 12
		var extra int
		switch kind {
		case btfKindInt, btfKindVar, btfKindDeclTag:
			extra = 4
		case btfKindArray:
			extra = 12
		case btfKindStruct, btfKindUnion, btfKindDatasec, btfKindEnum64:
			extra = 12 * vlen
		case btfKindEnum, btfKindProto:
			extra = 8 * vlen
		}
		if off+extra > len(types) {
			return nil, errors.New("truncated type")
		}
		switch kind {
		case btfKindEnum:
			for m := types[off : off+extra]; len(m) > 0; m = m[8:] {
				v := le.Uint32(m[4:])
				if signed {
					x.vals[le.Uint32(m)] = int64(int32(v))
				} else {
					x.vals[le.Uint32(m)] = int64(v)
				}
			}
		case btfKindEnum64:
			for m := types[off : off+extra]; len(m) > 0; m = m[12:] {
				x.vals[le.Uint32(m)] = int64(uint64(le.Uint32(m[8:]))<<32 | uint64(le.Uint32(m[4:])))
			}
		}
		off += extra
	}
	return x, nil
}
