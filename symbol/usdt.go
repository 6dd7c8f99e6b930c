package symbol

import (
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
)

// USDT is one USDT probe site, as a <sys/sdt.h> marker records it in the
// ELF note section .note.stapsdt. A probe written several times, or
// inlined in several places, has one site per copy.
type USDT struct {
	Provider, Name string
	// Location is the probe's virtual address in the file, Base the
	// address of .stapsdt.base when the note was written, and Semaphore
	// the address of the probe's enable counter, 0 if it has none.
	// Location and Semaphore are already adjusted for prelinking.
	Location, Base, Semaphore uint64
	// LocationOffset and SemaphoreOffset are Location and Semaphore as
	// offsets in the file, as uprobes take them; SemaphoreOffset is 0
	// when there is no semaphore.
	LocationOffset, SemaphoreOffset uint64
	// Args is the argument spec as written, such as "-4@%edi 8@-16(%rbp)".
	Args string
	// Arguments is Args parsed, or ArgsErr says why it could not be. A
	// symbol's address relative to %rip, such as counter(%rip), becomes
	// an offset from the probe's own address.
	Arguments []USDTArg
	ArgsErr   error
}

// GlobBinaries returns the ELF files matching a path pattern with '*'
// wildcards, spelled as the pattern spells them: "./prog*" gives
// "./prog1", not "prog1".
func GlobBinaries(pattern string) ([]string, error) {
	matches, err := filepath.Glob(pattern)
	if err != nil {
		return nil, fmt.Errorf("binaries %s: %w", pattern, err)
	}
	var out []string
	for _, m := range matches {
		if strings.HasPrefix(pattern, "./") && !strings.HasPrefix(m, "./") && !filepath.IsAbs(m) {
			m = "./" + m
		}
		if IsELF(m) {
			out = append(out, m)
		}
	}
	return out, nil
}

// ntStapsdt is the note type of a USDT probe, in notes named "stapsdt".
const ntStapsdt = 3

// USDTProbes reads the USDT probe sites of an ELF file in note order. A
// file without USDT probes has none, and no error.
func USDTProbes(path string) ([]USDT, error) {
	f, err := elf.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read usdt probes: %w", err)
	}
	defer f.Close()
	probes, err := usdtProbes(f)
	if err != nil {
		return nil, fmt.Errorf("read usdt probes of %s: %w", path, err)
	}
	return probes, nil
}

func usdtProbes(f *elf.File) ([]USDT, error) {
	sec := f.Section(".note.stapsdt")
	if sec == nil {
		return nil, nil
	}
	data, err := sec.Data()
	if err != nil {
		return nil, fmt.Errorf("read .note.stapsdt: %w", err)
	}
	var sdtBase uint64
	if s := f.Section(".stapsdt.base"); s != nil {
		sdtBase = s.Addr
	}
	addrSize := 8
	if f.Class == elf.ELFCLASS32 {
		addrSize = 4
	}
	var probes []USDT
	for len(data) > 0 {
		var n elfNote
		n, data, err = nextNote(data, f.ByteOrder)
		if err != nil {
			return nil, err
		}
		if n.name != "stapsdt" || n.typ != ntStapsdt {
			continue
		}
		u, err := parseStapsdt(n.desc, addrSize, f.ByteOrder)
		if err != nil {
			return nil, err
		}
		u.adjustPrelink(sdtBase)
		if u.LocationOffset, err = vaddrToOffset(f, u.Location); err != nil {
			return nil, fmt.Errorf("probe %s:%s: %w", u.Provider, u.Name, err)
		}
		if u.Semaphore != 0 {
			if u.SemaphoreOffset, err = vaddrToOffset(f, u.Semaphore); err != nil {
				return nil, fmt.Errorf("semaphore of probe %s:%s: %w", u.Provider, u.Name, err)
			}
		}
		u.Arguments, u.ArgsErr = ParseUSDTArgs(u.Args)
		if u.ArgsErr == nil {
			u.ArgsErr = resolveRIP(f, &u)
		}
		probes = append(probes, u)
	}
	return probes, nil
}

// resolveRIP turns the symbolic %rip-relative operands of u's arguments
// into offsets from the probe's address: when the probe fires, the
// traced ip is the probe's address, wherever the file is loaded.
func resolveRIP(f *elf.File, u *USDT) error {
	var syms []elf.Symbol
	for i := range u.Arguments {
		a := &u.Arguments[i]
		if a.Symbol == "" {
			continue
		}
		if syms == nil {
			syms, _ = f.Symbols()
			dyn, _ := f.DynamicSymbols()
			syms = append(syms, dyn...)
		}
		addr, ok := symbolValue(syms, a.Symbol)
		if !ok || a.Reg != "rip" {
			return fmt.Errorf("usdt argument %d %q: cannot resolve %s", i, a.Symbol, a.Symbol)
		}
		a.Value += int64(addr - u.Location)
		a.Symbol = ""
	}
	return nil
}

// symbolValue is the address of the data or function symbol name.
func symbolValue(syms []elf.Symbol, name string) (uint64, bool) {
	for _, s := range syms {
		if s.Name == name && s.Section != elf.SHN_UNDEF {
			return s.Value, true
		}
	}
	return 0, false
}

// adjustPrelink moves the probe's addresses by as much as prelinking
// moved .stapsdt.base, now at sdtBase: the note keeps the addresses from
// before.
func (u *USDT) adjustPrelink(sdtBase uint64) {
	if sdtBase == 0 || u.Base == 0 || sdtBase == u.Base {
		return
	}
	u.Location += sdtBase - u.Base
	if u.Semaphore != 0 {
		u.Semaphore += sdtBase - u.Base
	}
}

// elfNote is one ELF note.
type elfNote struct {
	name string
	typ  uint32
	desc []byte
}

// nextNote splits the first note off data: a 12-byte header (name size,
// descriptor size, type), then the name and the descriptor, each padded to
// 4 bytes.
func nextNote(data []byte, order binary.ByteOrder) (elfNote, []byte, error) {
	if len(data) < 12 {
		return elfNote{}, nil, errors.New("truncated note header")
	}
	nameSize := uint64(order.Uint32(data[0:]))
	descSize := uint64(order.Uint32(data[4:]))
	typ := order.Uint32(data[8:])
	data = data[12:]
	nameEnd := noteAlign(nameSize)
	descEnd := nameEnd + noteAlign(descSize)
	if descEnd > uint64(len(data)) {
		return elfNote{}, nil, errors.New("truncated note")
	}
	name := strings.TrimRight(string(data[:nameSize]), "\x00")
	desc := data[nameEnd : nameEnd+descSize]
	return elfNote{name: name, typ: typ, desc: desc}, data[descEnd:], nil
}

func noteAlign(n uint64) uint64 { return (n + 3) &^ 3 }

// parseStapsdt decodes a stapsdt note's descriptor: the probe's address,
// the address of .stapsdt.base and the semaphore's address, each addrSize
// bytes, then the provider, the name and the argument spec as
// NUL-terminated strings.
func parseStapsdt(desc []byte, addrSize int, order binary.ByteOrder) (USDT, error) {
	if len(desc) < 3*addrSize {
		return USDT{}, errors.New("truncated stapsdt note")
	}
	addr := func(i int) uint64 {
		b := desc[i*addrSize:]
		if addrSize == 4 {
			return uint64(order.Uint32(b))
		}
		return order.Uint64(b)
	}
	u := USDT{Location: addr(0), Base: addr(1), Semaphore: addr(2)}
	strs := strings.SplitN(string(desc[3*addrSize:]), "\x00", 4)
	if len(strs) < 3 || strs[0] == "" || strs[1] == "" {
		return USDT{}, errors.New("stapsdt note without provider and name")
	}
	u.Provider, u.Name, u.Args = strs[0], strs[1], strs[2]
	return u, nil
}

// vaddrToOffset turns a virtual address into its offset in the file, through
// the loadable segment that maps it.
func vaddrToOffset(f *elf.File, addr uint64) (uint64, error) {
	for _, p := range f.Progs {
		if p.Type == elf.PT_LOAD && p.Vaddr <= addr && addr < p.Vaddr+p.Filesz {
			return addr - p.Vaddr + p.Off, nil
		}
	}
	return 0, fmt.Errorf("address %#x is in no loadable segment", addr)
}

// USDTArgKind is where a USDT argument's value is.
type USDTArgKind int

// The argument kinds.
const (
	// USDTConst is a constant: $42.
	USDTConst USDTArgKind = iota
	// USDTReg is a register's value: %edi.
	USDTReg
	// USDTMem is a value in memory: -16(%rbp), 8(%rax,%rdx,4).
	USDTMem
)

// USDTArg is one argument of a USDT probe, parsed from the x86_64 operand
// in its spec.
type USDTArg struct {
	Kind USDTArgKind
	// Size is the value's size in bytes (1, 2, 4 or 8), Signed whether it
	// is sign extended to 64 bits.
	Size   int
	Signed bool
	// Value is a constant's value, or a memory operand's displacement.
	Value int64
	// Symbol is a memory operand's symbolic displacement, as in
	// counter+8(%rip), with Value holding the +8.
	Symbol string
	// Reg is the register, or a memory operand's base register, as
	// written without '%': "edi", "rbp". Index and Scale are a memory
	// operand's index register and scale, "" and 0 when it has none.
	Reg   string
	Index string
	Scale int
}

// ParseUSDTArgs parses an argument spec: space-separated SIZE@OPERAND
// items, where SIZE is 1, 2, 4 or 8, negative for a signed value, and
// OPERAND is an x86_64 operand in AT&T syntax: $imm, %reg, off(%reg) or
// off(%base,%index,scale).
func ParseUSDTArgs(spec string) ([]USDTArg, error) {
	var args []USDTArg
	for _, item := range strings.Fields(spec) {
		a, err := parseUSDTArg(item)
		if err != nil {
			return nil, fmt.Errorf("usdt argument %d %q: %w", len(args), item, err)
		}
		args = append(args, a)
	}
	return args, nil
}

func parseUSDTArg(item string) (USDTArg, error) {
	size, operand, ok := strings.Cut(item, "@")
	if !ok {
		// Old markers write no size: the value is a long.
		size, operand = "8", item
	}
	n, err := strconv.Atoi(size)
	if err != nil {
		return USDTArg{}, fmt.Errorf("invalid size %q", size)
	}
	a := USDTArg{Size: n, Signed: n < 0}
	if a.Signed {
		a.Size = -n
	}
	switch a.Size {
	case 1, 2, 4, 8:
	default:
		return USDTArg{}, fmt.Errorf("invalid size %d", n)
	}

	switch {
	case strings.HasPrefix(operand, "$"):
		a.Kind = USDTConst
		a.Value, err = parseDisplacement(operand[1:])
		if err != nil {
			return USDTArg{}, fmt.Errorf("invalid constant %q", operand[1:])
		}
	case strings.HasPrefix(operand, "%"):
		a.Kind, a.Reg = USDTReg, operand[1:]
		if !isRegName(a.Reg) {
			return USDTArg{}, fmt.Errorf("invalid register %q", operand)
		}
	default:
		a.Kind = USDTMem
		open := strings.IndexByte(operand, '(')
		if open < 0 || !strings.HasSuffix(operand, ")") {
			return USDTArg{}, errors.New("unsupported operand")
		}
		if disp := operand[:open]; disp != "" {
			a.Symbol, a.Value, err = parseSymbolic(disp)
			if err != nil {
				return USDTArg{}, fmt.Errorf("unsupported displacement %q", disp)
			}
		}
		if err := a.parseAddress(operand[open+1 : len(operand)-1]); err != nil {
			return USDTArg{}, err
		}
	}
	return a, nil
}

// parseAddress parses the inside of a memory operand's parentheses:
// %base, or %base,%index[,scale].
func (a *USDTArg) parseAddress(s string) error {
	parts := strings.Split(s, ",")
	if len(parts) > 3 || !strings.HasPrefix(parts[0], "%") || !isRegName(parts[0][1:]) {
		return fmt.Errorf("unsupported address (%s)", s)
	}
	a.Reg = parts[0][1:]
	if len(parts) == 1 {
		return nil
	}
	if !strings.HasPrefix(parts[1], "%") || !isRegName(parts[1][1:]) {
		return fmt.Errorf("invalid index register in (%s)", s)
	}
	a.Index, a.Scale = parts[1][1:], 1
	if len(parts) == 3 {
		scale, err := strconv.Atoi(parts[2])
		if err != nil || (scale != 1 && scale != 2 && scale != 4 && scale != 8) {
			return fmt.Errorf("invalid scale in (%s)", s)
		}
		a.Scale = scale
	}
	return nil
}

// parseSymbolic parses a displacement that may start with a symbol:
// -16, counter, counter+8, counter-4.
func parseSymbolic(s string) (string, int64, error) {
	if v, err := parseDisplacement(s); err == nil {
		return "", v, nil
	}
	sym, num := s, ""
	if i := strings.LastIndexAny(s, "+-"); i > 0 {
		sym, num = s[:i], s[i:]
	}
	if !isSymbolName(sym) {
		return "", 0, fmt.Errorf("invalid displacement %q", s)
	}
	if num == "" {
		return sym, 0, nil
	}
	v, err := parseDisplacement(strings.TrimPrefix(num, "+"))
	return sym, v, err
}

// isSymbolName reports whether s is a C identifier, possibly with the
// dots of compiler-made names (counter.0).
func isSymbolName(s string) bool {
	if s == "" || s[0] >= '0' && s[0] <= '9' {
		return false
	}
	for _, c := range s {
		if c != '_' && c != '.' && c != '$' && (c < 'a' || c > 'z') && (c < 'A' || c > 'Z') && (c < '0' || c > '9') {
			return false
		}
	}
	return true
}

// parseDisplacement parses a signed decimal or 0x hexadecimal number.
func parseDisplacement(s string) (int64, error) {
	neg := strings.HasPrefix(s, "-")
	u, err := strconv.ParseUint(strings.TrimPrefix(s, "-"), 0, 64)
	if err != nil {
		return 0, err
	}
	if neg {
		return -int64(u), nil
	}
	return int64(u), nil
}

// isRegName reports whether s looks like a register name: lower-case
// letters and digits, starting with a letter. Which registers exist is
// the code generator's business.
func isRegName(s string) bool {
	if s == "" || s[0] < 'a' || s[0] > 'z' {
		return false
	}
	for _, c := range s {
		if (c < 'a' || c > 'z') && (c < '0' || c > '9') {
			return false
		}
	}
	return true
}
