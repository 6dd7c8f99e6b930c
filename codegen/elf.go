package codegen

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
	"github.com/cilium/ebpf/btf"
)

// WriteELF writes the programs and maps as a BPF object file, as clang
// writes one and libbpf (bpftool prog loadall) loads it: one section per
// program, named for its program type; its maps defined in BTF in
// ".maps"; the globals gtrace reads by address (the stop flag) in
// ".bss"; relocations for every map reference. Nothing is attached: a
// loader attaches the programs where it likes.
func (o *Output) WriteELF(w io.Writer) error {
	e := &elfWriter{shstr: newStrtab(), str: newStrtab(), rels: map[int][]elfRel{}, funcs: map[int][]elfFunc{}}
	var mapNames []string
	for name := range o.Spec.Maps {
		if name != mapGlobals {
			mapNames = append(mapNames, name)
		}
	}
	slices.Sort(mapNames)
	e.addSection(elfSection{name: "", typ: elf.SHT_NULL})
	strtab := e.addSection(elfSection{name: ".strtab", typ: elf.SHT_STRTAB, align: 1})
	e.addSection(elfSection{name: ".symtab", typ: elf.SHT_SYMTAB, link: strtab, align: 8, entsize: 24})
	mapsSec := e.addSection(elfSection{name: ".maps", typ: elf.SHT_PROGBITS, flags: elf.SHF_ALLOC | elf.SHF_WRITE, align: 8, data: make([]byte, 8*mapDefMembers*len(mapNames))})
	bss := e.addSection(elfSection{name: ".bss", typ: elf.SHT_NOBITS, flags: elf.SHF_ALLOC | elf.SHF_WRITE, align: 8, size: uint64(globalsSize)})
	e.addSection(elfSection{name: "license", typ: elf.SHT_PROGBITS, flags: elf.SHF_ALLOC | elf.SHF_WRITE, align: 1, data: []byte("GPL\x00")})
	e.addSection(elfSection{name: ".BTF", typ: elf.SHT_PROGBITS, align: 4})
	e.addSection(elfSection{name: ".text", typ: elf.SHT_PROGBITS, flags: elf.SHF_ALLOC | elf.SHF_EXECINSTR, align: 8})

	mapSym := map[string]int{}
	for i, name := range mapNames {
		mapSym[name] = e.addSymbol(elfSymbol{name: name, info: globalObject, shndx: mapsSec, value: uint64(8 * mapDefMembers * i), size: 8 * mapDefMembers})
	}
	mapSym[mapGlobals] = e.addSymbol(elfSymbol{name: mapGlobals, info: globalObject, shndx: bss, size: uint64(globalsSize)})

	for _, p := range append(slices.Clone(o.Progs), o.Dispatchers...) {
		if err := e.addProgram(p, o.Spec.Programs[p.Name], mapSym); err != nil {
			return fmt.Errorf("emit elf: program %s: %w", p.Name, err)
		}
	}
	if err := e.addBTF(o.Spec.Maps, mapNames); err != nil {
		return fmt.Errorf("emit elf: %w", err)
	}
	e.relocations()
	e.sections[elfSymtab].data, e.sections[elfSymtab].info = e.symtab()
	e.sections[strtab].data = e.str.data
	e.addSection(elfSection{name: ".shstrtab", typ: elf.SHT_STRTAB, align: 1})
	return e.write(w)
}

// Indexes of the sections every object has in the same place.
const (
	elfSymtab = 2
	elfBTF    = 6
	elfText   = 7
)

// mapDefMembers is the number of members of a map's BTF definition:
// type, key_size, value_size, max_entries, map_flags.
const mapDefMembers = 5

// addBTF fills .BTF and adds .BTF.ext. The maps are BTF-defined maps: a
// variable in .maps whose struct gives each property as the length of an
// array it points to, as libbpf's __uint() does. Each function has its
// BTF, and .BTF.ext places it (the kernel wants it of programs that pass
// callbacks), by section, which an empty DATASEC names in BTF's strings.
func (e *elfWriter) addBTF(specs map[string]*ebpf.MapSpec, names []string) error {
	intType := &btf.Int{Name: "int", Size: 4, Encoding: btf.Signed}
	sized := func(v uint32) btf.Type {
		return &btf.Pointer{Target: &btf.Array{Index: intType, Type: intType, Nelems: v}}
	}
	sec := &btf.Datasec{Name: ".maps", Size: uint32(8 * mapDefMembers * len(names))}
	for i, name := range names {
		m := specs[name]
		var members []btf.Member
		for j, f := range []struct {
			name  string
			value uint32
		}{{"type", uint32(m.Type)}, {"key_size", m.KeySize}, {"value_size", m.ValueSize},
			{"max_entries", m.MaxEntries}, {"map_flags", uint32(m.Flags)}} {
			members = append(members, btf.Member{Name: f.name, Type: sized(f.value), Offset: btf.Bits(64 * j)})
		}
		def := &btf.Struct{Size: 8 * mapDefMembers, Members: members}
		v := &btf.Var{Name: name, Type: def, Linkage: btf.GlobalVar}
		sec.Vars = append(sec.Vars, btf.VarSecinfo{Type: v, Offset: uint32(8 * mapDefMembers * i), Size: 8 * mapDefMembers})
	}
	b, err := btf.NewBuilder([]btf.Type{sec}, nil)
	if err != nil {
		return err
	}
	secs := slices.Sorted(maps.Keys(e.funcs))
	ids := map[*btf.Func]btf.TypeID{}
	for _, idx := range secs {
		name := e.sections[idx].name
		if _, err := b.Add(&btf.Datasec{Name: name, Size: uint32(len(e.sections[idx].data))}); err != nil {
			return err
		}
		for _, f := range e.funcs[idx] {
			if ids[f.fn], err = b.Add(f.fn); err != nil {
				return err
			}
		}
	}
	data, err := b.Marshal(nil, &btf.MarshalOptions{Order: binary.LittleEndian})
	if err != nil {
		return err
	}
	e.sections[elfBTF].data = data

	// .BTF.ext: a header, then func_info: the record size, then for each
	// section its name, its count of records, and the records.
	info := binary.LittleEndian.AppendUint32(nil, 8)
	for _, idx := range secs {
		info = binary.LittleEndian.AppendUint32(info, btfString(data, e.sections[idx].name))
		info = binary.LittleEndian.AppendUint32(info, uint32(len(e.funcs[idx])))
		for _, f := range e.funcs[idx] {
			info = binary.LittleEndian.AppendUint32(info, uint32(f.off))
			info = binary.LittleEndian.AppendUint32(info, uint32(ids[f.fn]))
		}
	}
	ext := []byte{0x9f, 0xeb, 1, 0}
	ext = binary.LittleEndian.AppendUint32(ext, 24)                // header length
	ext = binary.LittleEndian.AppendUint32(ext, 0)                 // func_info offset
	ext = binary.LittleEndian.AppendUint32(ext, uint32(len(info))) // and length
	ext = binary.LittleEndian.AppendUint32(ext, uint32(len(info))) // no line_info
	ext = binary.LittleEndian.AppendUint32(ext, 0)
	e.addSection(elfSection{name: ".BTF.ext", typ: elf.SHT_PROGBITS, align: 4, data: append(ext, info...)})
	return nil
}

// btfString finds s in the string table of the BTF in data.
func btfString(data []byte, s string) uint32 {
	hdrLen := binary.LittleEndian.Uint32(data[4:])
	strOff := binary.LittleEndian.Uint32(data[16:])
	strLen := binary.LittleEndian.Uint32(data[20:])
	strs := data[hdrLen+strOff : hdrLen+strOff+strLen]
	return uint32(bytes.Index(strs, append(append([]byte{0}, s...), 0)) + 1)
}

// elfSection is one section of the object.
type elfSection struct {
	name                 string
	typ                  elf.SectionType
	flags                elf.SectionFlag
	link, info           int
	align, entsize, size uint64
	data                 []byte
}

// The symbols' kinds (st_info: binding in the high nibble, type in the
// low one): global objects (maps) and functions.
const (
	globalObject = byte(elf.STB_GLOBAL)<<4 | byte(elf.STT_OBJECT)
	globalFunc   = byte(elf.STB_GLOBAL)<<4 | byte(elf.STT_FUNC)
)

// elfSymbol is one entry of the symbol table.
type elfSymbol struct {
	name        string
	info        byte
	shndx       int
	value, size uint64
}

type elfWriter struct {
	sections   []elfSection
	symbols    []elfSymbol       // all global, after the null symbol
	rels       map[int][]elfRel  // by the index of the section they change
	funcs      map[int][]elfFunc // the functions, by section
	shstr, str *strtab
}

func (e *elfWriter) addSection(s elfSection) int {
	e.sections = append(e.sections, s)
	return len(e.sections) - 1
}

// addSymbol adds a global symbol and returns its index among the
// globals, which follow the null symbol in the table.
func (e *elfWriter) addSymbol(s elfSymbol) int {
	e.symbols = append(e.symbols, s)
	return len(e.symbols) - 1
}

// sectionName names a program's section for libbpf, which takes the
// program type and attach type from it. Nothing is attached, so the rest
// of the name only tells the programs apart; fentry and fexit name their
// function, which they are loaded for.
func sectionName(name string, spec *ebpf.ProgramSpec) string {
	switch {
	case spec.AttachType == ebpf.AttachTraceKprobeMulti:
		return "kprobe.multi/" + name
	case spec.Type == ebpf.Kprobe:
		return "kprobe/" + name
	case spec.Type == ebpf.TracePoint:
		return "tracepoint/" + name
	case spec.Type == ebpf.RawTracepoint:
		return "raw_tp/" + name
	case spec.Type == ebpf.PerfEvent:
		return "perf_event"
	case spec.AttachType == ebpf.AttachTraceFExit:
		return "fexit/" + spec.AttachTo
	}
	return "fentry/" + spec.AttachTo
}

// elfFunc is a function at an offset of its section.
type elfFunc struct {
	off uint64
	fn  *btf.Func
}

// elfRel is a relocation of the instruction at off of a section, against
// a symbol, by its index among the globals.
type elfRel struct {
	off uint64
	sym int
	typ uint64
}

// Relocation types: a 64-bit immediate (a map's address, a function
// pointer) and a call.
const (
	relBPF64 = 1
	relBPF32 = 10
)

// addProgram adds a program's section and symbol, its loop callbacks to
// .text, which libbpf takes subprograms from, and the relocations of
// its map and function references.
func (e *elfWriter) addProgram(p *Program, spec *ebpf.ProgramSpec, mapSym map[string]int) error {
	insns := slices.Clone(spec.Instructions)
	var buf bytes.Buffer
	if err := insns.Marshal(&buf, binary.LittleEndian); err != nil {
		return err
	}
	code := buf.Bytes()
	// The functions, by their first instruction's symbol: the program,
	// then its callbacks.
	var starts []uint64
	var fns []*btf.Func
	funcAt := map[string]uint64{} // callbacks' offsets in the code
	funcSym := map[uint64]int{}   // their symbols, by offset
	for it := insns.Iterate(); it.Next(); {
		if fn := btf.FuncMetadata(it.Ins); fn != nil {
			starts = append(starts, uint64(it.Offset)*asm.InstructionSize)
			fns = append(fns, fn)
			funcAt[it.Ins.Symbol()] = starts[len(starts)-1]
		}
	}
	if len(starts) == 0 || starts[0] != 0 {
		return errors.New("no BTF function information at its start")
	}
	mainEnd := uint64(len(code))
	if len(starts) > 1 {
		mainEnd = starts[1]
	}
	sec := e.addSection(elfSection{name: sectionName(p.Name, spec), typ: elf.SHT_PROGBITS, flags: elf.SHF_ALLOC | elf.SHF_EXECINSTR, align: 8, data: code[:mainEnd]})
	// A callback at offset x of the code goes to textOff + x - mainEnd.
	textOff := uint64(len(e.sections[elfText].data))
	for i, start := range starts[1:] {
		end := uint64(len(code))
		if i+2 < len(starts) {
			end = starts[i+2]
		}
		funcSym[starts[i+1]] = e.addSymbol(elfSymbol{name: fmt.Sprintf("%s_fn%d", p.Name, i+1), info: globalFunc,
			shndx: elfText, value: textOff + start - mainEnd, size: end - start})
	}
	e.addSymbol(elfSymbol{name: p.Name, info: globalFunc, shndx: sec, size: mainEnd})
	e.funcs[sec] = append(e.funcs[sec], elfFunc{0, fns[0]})
	for i, fn := range fns[1:] {
		e.funcs[elfText] = append(e.funcs[elfText], elfFunc{textOff + starts[i+1] - mainEnd, fn})
	}

	for it := insns.Iterate(); it.Next(); {
		ins, off := it.Ins, uint64(it.Offset)*asm.InstructionSize
		var r elfRel
		switch {
		case ins.IsLoadFromMap() && ins.Reference() != "":
			sym, ok := mapSym[ins.Reference()]
			if !ok {
				return fmt.Errorf("reference to unknown map %s", ins.Reference())
			}
			// libbpf wants the offset into a data section in the first
			// half's immediate, and fills in the map itself.
			var valueOff uint32
			if ins.Src == asm.PseudoMapValue {
				valueOff = uint32(uint64(ins.Constant) >> 32)
			}
			binary.LittleEndian.PutUint32(code[off+4:], valueOff)
			binary.LittleEndian.PutUint32(code[off+12:], 0)
			r = elfRel{sym: sym, typ: relBPF64}
		case ins.IsFunctionCall() || ins.IsLoadOfFunctionPointer():
			at, ok := funcAt[ins.Reference()]
			if !ok || at < mainEnd {
				return fmt.Errorf("reference to unknown function %s", ins.Reference())
			}
			// Against the callee's own symbol, as clang relocates
			// references to global functions: a call's immediate is -1,
			// a pointer's 0.
			imm, typ := int32(-1), uint64(relBPF32)
			if ins.IsLoadOfFunctionPointer() {
				imm, typ = 0, relBPF64
				binary.LittleEndian.PutUint32(code[off+12:], 0)
			}
			binary.LittleEndian.PutUint32(code[off+4:], uint32(imm))
			r = elfRel{sym: funcSym[at], typ: typ}
		default:
			continue
		}
		if off < mainEnd {
			r.off = off
			e.rels[sec] = append(e.rels[sec], r)
		} else {
			r.off = textOff + off - mainEnd
			e.rels[elfText] = append(e.rels[elfText], r)
		}
	}
	e.sections[elfText].data = append(e.sections[elfText].data, code[mainEnd:]...)
	return nil
}

// relocations adds the relocation section of each section that has
// relocations.
func (e *elfWriter) relocations() {
	for _, sec := range slices.Sorted(maps.Keys(e.rels)) {
		var data []byte
		for _, r := range e.rels[sec] {
			data = binary.LittleEndian.AppendUint64(data, r.off)
			data = binary.LittleEndian.AppendUint64(data, uint64(1+r.sym)<<32|r.typ)
		}
		e.addSection(elfSection{name: ".rel" + e.sections[sec].name, typ: elf.SHT_REL, link: elfSymtab, info: sec, align: 8, entsize: 16, data: data})
	}
}

// symtab lays out the symbol table: the null symbol, then the globals.
// It returns the table and the index of the first global.
func (e *elfWriter) symtab() ([]byte, int) {
	out := make([]byte, 24)
	for _, s := range e.symbols {
		out = binary.LittleEndian.AppendUint32(out, e.str.add(s.name))
		out = append(out, s.info, 0)
		out = binary.LittleEndian.AppendUint16(out, uint16(s.shndx))
		out = binary.LittleEndian.AppendUint64(out, s.value)
		out = binary.LittleEndian.AppendUint64(out, s.size)
	}
	return out, 1
}

// write writes the ELF header, the sections' contents and the section
// header table.
func (e *elfWriter) write(w io.Writer) error {
	for i := range e.sections {
		e.shstr.add(e.sections[i].name)
	}
	e.sections[len(e.sections)-1].data = e.shstr.data
	var body bytes.Buffer
	const headerSize = 64
	offsets := make([]uint64, len(e.sections))
	for i, s := range e.sections {
		for (headerSize+body.Len())%8 != 0 {
			body.WriteByte(0)
		}
		offsets[i] = uint64(headerSize + body.Len())
		body.Write(s.data)
	}
	for (headerSize+body.Len())%8 != 0 {
		body.WriteByte(0)
	}
	shoff := uint64(headerSize + body.Len())

	var h []byte
	h = append(h, 0x7f, 'E', 'L', 'F', 2, 1, 1, 0) // 64-bit, little endian, version 1
	h = append(h, make([]byte, 8)...)
	h = binary.LittleEndian.AppendUint16(h, 1)   // ET_REL
	h = binary.LittleEndian.AppendUint16(h, 247) // EM_BPF
	h = binary.LittleEndian.AppendUint32(h, 1)
	h = binary.LittleEndian.AppendUint64(h, 0) // entry
	h = binary.LittleEndian.AppendUint64(h, 0) // program headers
	h = binary.LittleEndian.AppendUint64(h, shoff)
	h = binary.LittleEndian.AppendUint32(h, 0)
	h = binary.LittleEndian.AppendUint16(h, headerSize)
	h = binary.LittleEndian.AppendUint16(h, 0)
	h = binary.LittleEndian.AppendUint16(h, 0)
	h = binary.LittleEndian.AppendUint16(h, 64) // section header size
	h = binary.LittleEndian.AppendUint16(h, uint16(len(e.sections)))
	h = binary.LittleEndian.AppendUint16(h, uint16(len(e.sections)-1)) // .shstrtab, last

	var sh []byte
	for i, s := range e.sections {
		size := uint64(len(s.data))
		if s.typ == elf.SHT_NOBITS {
			size = s.size
		}
		sh = binary.LittleEndian.AppendUint32(sh, e.shstr.add(s.name))
		sh = binary.LittleEndian.AppendUint32(sh, uint32(s.typ))
		sh = binary.LittleEndian.AppendUint64(sh, uint64(s.flags))
		sh = binary.LittleEndian.AppendUint64(sh, 0)
		sh = binary.LittleEndian.AppendUint64(sh, offsets[i])
		sh = binary.LittleEndian.AppendUint64(sh, size)
		sh = binary.LittleEndian.AppendUint32(sh, uint32(s.link))
		sh = binary.LittleEndian.AppendUint32(sh, uint32(s.info))
		sh = binary.LittleEndian.AppendUint64(sh, s.align)
		sh = binary.LittleEndian.AppendUint64(sh, s.entsize)
	}
	for _, part := range [][]byte{h, body.Bytes(), sh} {
		if _, err := w.Write(part); err != nil {
			return err
		}
	}
	return nil
}

// strtab is an ELF string table: names, each ended by a NUL, at offsets.
type strtab struct {
	data []byte
	at   map[string]uint32
}

func newStrtab() *strtab { return &strtab{data: []byte{0}, at: map[string]uint32{"": 0}} }

func (t *strtab) add(s string) uint32 {
	if off, ok := t.at[s]; ok {
		return off
	}
	off := uint32(len(t.data))
	t.data = append(append(t.data, s...), 0)
	t.at[s] = off
	return off
}
