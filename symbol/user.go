package symbol

import (
	"bytes"
	"cmp"
	"debug/elf"
	"debug/gosym"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"github.com/ianlancetaylor/demangle"
)

// maxProcesses bounds how many processes a User remembers; beyond it the
// least recently used one is forgotten.
const maxProcesses = 4096

// debugDir is where Debian and most distributions install separate debug
// files, named by build id.
const debugDir = "/usr/lib/debug/.build-id"

// User resolves user-space addresses of live processes. The zero value is
// ready to use and safe for concurrent use.
//
// Each process's /proc/PID/maps is read on first use and again only when
// an address falls outside every mapping read so far, since processes map
// libraries later. Each mapped file's symbols are read once, on first use,
// and shared by every process that maps the same file. What is cached for
// a process stays usable after it exits.
type User struct {
	mu    sync.Mutex
	procs map[uint32]*process
	files map[fileKey]*objFile
	tick  uint64 // use counter for forgetting the least recently used process
}

// Resolve returns the symbol containing addr in process pid and the
// offset of addr from the symbol's start; ok is false when no symbol
// covers it (then callers print the address in hex).
func (u *User) Resolve(pid uint32, addr uint64) (name string, offset uint64, ok bool) {
	m, found := u.process(pid).find(u, addr)
	if !found || !m.exec || m.file == nil {
		return "", 0, false
	}
	f := m.file
	f.once.Do(func() { f.load(pid, m) })
	vaddr, ok := f.vaddr(m, addr)
	if !ok {
		return "", 0, false
	}
	i, ok := f.lookup(vaddr)
	if !ok {
		return "", 0, false
	}
	return f.name(i), vaddr - f.syms[i].start, true
}

// Module returns the path of the mapped file containing addr in pid, or
// "" when none does.
func (u *User) Module(pid uint32, addr uint64) string {
	m, found := u.process(pid).find(u, addr)
	if !found || !strings.HasPrefix(m.path, "/") {
		return ""
	}
	return m.path
}

// process returns pid's cache entry, creating it if needed.
func (u *User) process(pid uint32) *process {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.tick++
	if p, ok := u.procs[pid]; ok {
		p.lastUse = u.tick
		return p
	}
	if u.procs == nil {
		u.procs = map[uint32]*process{}
	}
	if len(u.procs) >= maxProcesses {
		u.forgetOldest()
	}
	p := &process{pid: pid, lastUse: u.tick}
	u.procs[pid] = p
	return p
}

// forgetOldest drops the least recently used process. u.mu must be held.
func (u *User) forgetOldest() {
	var oldest *process
	for _, p := range u.procs {
		if oldest == nil || p.lastUse < oldest.lastUse {
			oldest = p
		}
	}
	if oldest != nil {
		delete(u.procs, oldest.pid)
	}
}

// file returns the shared, possibly not yet loaded, entry for a mapped
// file.
func (u *User) file(key fileKey) *objFile {
	u.mu.Lock()
	defer u.mu.Unlock()
	if f, ok := u.files[key]; ok {
		return f
	}
	if u.files == nil {
		u.files = map[fileKey]*objFile{}
	}
	f := &objFile{}
	u.files[key] = f
	return f
}

// process is what is known of one process's address space.
type process struct {
	pid     uint32
	lastUse uint64 // guarded by User.mu

	mu   sync.Mutex
	maps []mapping // sorted by start, not overlapping
}

// mapping is one line of /proc/PID/maps.
type mapping struct {
	start, end uint64 // [start, end)
	offset     uint64 // file offset mapped at start
	exec       bool
	dev        string // "fd:01", as the kernel prints it
	inode      uint64
	path       string   // "" when anonymous; "[vdso]", "[stack]" and the like for special ones
	file       *objFile // the symbols of path, for executable mappings that have some
}

// find returns the mapping containing addr, reading the process's maps
// again if none known does.
func (p *process) find(u *User, addr uint64) (mapping, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if m, ok := findMapping(p.maps, addr); ok {
		return m, true
	}
	maps, err := readMaps(u, p.pid)
	// A process that has exited has no maps file, a zombie an empty one:
	// keep what was read while it ran.
	if err != nil || len(maps) == 0 {
		return mapping{}, false
	}
	p.maps = maps
	return findMapping(p.maps, addr)
}

// findMapping binary-searches maps for the one containing addr.
func findMapping(maps []mapping, addr uint64) (mapping, bool) {
	lo, hi := 0, len(maps)
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		if maps[mid].end <= addr {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	if lo < len(maps) && maps[lo].start <= addr {
		return maps[lo], true
	}
	return mapping{}, false
}

// readMaps reads and parses /proc/PID/maps, attaching each executable
// file-backed mapping to its shared file entry.
func readMaps(u *User, pid uint32) ([]mapping, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/maps", pid))
	if err != nil {
		return nil, fmt.Errorf("read maps of process %d: %w", pid, err)
	}
	maps, err := parseMaps(string(data))
	if err != nil {
		return nil, fmt.Errorf("parse maps of process %d: %w", pid, err)
	}
	for i := range maps {
		m := &maps[i]
		if m.exec && (strings.HasPrefix(m.path, "/") || m.path == "[vdso]") {
			m.file = u.file(fileKey{path: m.path, dev: m.dev, inode: m.inode})
		}
	}
	return maps, nil
}

// fileKey identifies a mapped file across processes: the same path can
// name different files in different mount namespaces, or over time.
type fileKey struct {
	path  string
	dev   string
	inode uint64
}

// parseMaps parses lines like
//
//	7f2c1a028000-7f2c1a1bd000 r-xp 00028000 fd:01 1314 /usr/lib/x86_64-linux-gnu/libc.so.6
//
// The kernel lists mappings in address order.
func parseMaps(data string) ([]mapping, error) {
	var out []mapping
	for line := range strings.Lines(data) {
		line = strings.TrimSuffix(line, "\n")
		if line == "" {
			continue
		}
		m, err := parseMapsLine(line)
		if err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	return out, nil
}

func parseMapsLine(line string) (mapping, error) {
	// The path, last, may contain spaces.
	var f [5]string
	rest := line
	for i := range f {
		f[i], rest, _ = strings.Cut(strings.TrimLeft(rest, " "), " ")
	}
	lo, hi, ok := strings.Cut(f[0], "-")
	if !ok || len(f[1]) < 3 {
		return mapping{}, fmt.Errorf("line %q: not start-end perms offset dev inode path", line)
	}
	start, err1 := strconv.ParseUint(lo, 16, 64)
	end, err2 := strconv.ParseUint(hi, 16, 64)
	offset, err3 := strconv.ParseUint(f[2], 16, 64)
	inode, err4 := strconv.ParseUint(f[4], 10, 64)
	if err := errors.Join(err1, err2, err3, err4); err != nil {
		return mapping{}, fmt.Errorf("line %q: %w", line, err)
	}
	return mapping{
		start:  start,
		end:    end,
		offset: offset,
		exec:   f[1][2] == 'x',
		dev:    f[3],
		inode:  inode,
		path:   strings.TrimSuffix(strings.TrimLeft(rest, " "), " (deleted)"),
	}, nil
}

// objFile holds the function symbols of one ELF file.
type objFile struct {
	once    sync.Once
	exec    bool      // ET_EXEC: addresses are virtual addresses as they are
	loads   []segment // PT_LOAD program headers
	memSize uint64    // for the vDSO, the size of the image read; 0 otherwise
	syms    []usym    // sorted by start, one per address
	maxEnd  []uint64  // maxEnd[i] is the highest end of syms[:i+1]

	mu        sync.Mutex
	demangled map[int]string // C++ names demangled so far, by index in syms
}

type segment struct {
	offset, vaddr, filesz uint64
}

type usym struct {
	start, size uint64
	name        string
	mangled     bool // a C++ name, demangled when first asked for
}

// load reads the symbols of m's file, found through process pid. A file
// that cannot be read simply has no symbols.
func (f *objFile) load(pid uint32, m mapping) {
	if m.path == "[vdso]" {
		f.loadVDSO()
		return
	}
	file := openMapped(pid, m)
	if file == nil {
		return
	}
	defer file.Close()
	ef, err := elf.NewFile(file)
	if err != nil {
		return
	}
	f.readELF(ef)
	if ef.Section(".symtab") != nil {
		return
	}
	// Stripped: a debug file installed for its build id has every symbol.
	if path := debugFile(ef); path != "" {
		if df, err := elf.Open(path); err == nil {
			defer df.Close()
			f.readSymbols(df)
		}
	}
}

// openMapped opens the file of mapping m as process pid sees it: through
// its root directory (it may live in another mount namespace), through
// map_files (it may have been deleted; that needs root), or by path. The
// first candidate whose inode is the mapped one wins; failing that, the
// first that opens at all (overlayfs reports other inodes than maps).
// It returns nil when none opens.
func openMapped(pid uint32, m mapping) *os.File {
	candidates := []string{
		fmt.Sprintf("/proc/%d/root%s", pid, m.path),
		fmt.Sprintf("/proc/%d/map_files/%x-%x", pid, m.start, m.end),
		m.path,
	}
	var chosen *os.File
	for _, c := range candidates {
		file, err := os.Open(c)
		if err != nil {
			continue
		}
		if inode(file) == m.inode {
			if chosen != nil {
				chosen.Close()
			}
			return file
		}
		if chosen == nil {
			chosen = file
		} else {
			file.Close()
		}
	}
	return chosen
}

// inode returns file's inode number, or 0 if stat fails.
func inode(file *os.File) uint64 {
	fi, err := file.Stat()
	if err != nil {
		return 0
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return st.Ino
	}
	return 0
}

// readELF reads the program headers and function symbols of ef.
func (f *objFile) readELF(ef *elf.File) {
	f.exec = ef.Type == elf.ET_EXEC
	for _, p := range ef.Progs {
		if p.Type == elf.PT_LOAD {
			f.loads = append(f.loads, segment{offset: p.Off, vaddr: p.Vaddr, filesz: p.Filesz})
		}
	}
	f.readSymbols(ef)
}

// readSymbols sets f's symbols to the functions of .symtab and .dynsym,
// one per address, sorted. A Go binary without .symtab (go build -ldflags=-s,
// and go test's binaries) still lists its functions in .gopclntab.
func (f *objFile) readSymbols(ef *elf.File) {
	var raw []rawSym
	add := func(syms []elf.Symbol) {
		for _, s := range syms {
			typ := elf.ST_TYPE(s.Info)
			if typ != elf.STT_FUNC && typ != elf.STT_GNU_IFUNC {
				continue
			}
			if s.Section == elf.SHN_UNDEF || s.Name == "" {
				continue
			}
			name, _, _ := strings.Cut(s.Name, "@")
			raw = append(raw, rawSym{usym{start: s.Value, size: s.Size, name: name}, elf.ST_BIND(s.Info)})
		}
	}
	syms, err := ef.Symbols()
	add(syms)
	if err != nil {
		raw = append(raw, goFunctions(ef)...)
	}
	if syms, err := ef.DynamicSymbols(); err == nil {
		add(syms)
	}
	f.setSymbols(raw)
}

// rawSym is a symbol before duplicates at one address are merged.
type rawSym struct {
	usym
	bind elf.SymBind
}

// setSymbols sorts raw and keeps the best name at each address.
func (f *objFile) setSymbols(raw []rawSym) {
	slices.SortFunc(raw, compareRaw)
	f.syms = make([]usym, 0, len(raw))
	for i, r := range raw {
		if i > 0 && r.start == raw[i-1].start {
			continue // sortRaw put the preferred one first
		}
		r.mangled = strings.HasPrefix(r.name, "_Z")
		f.syms = append(f.syms, r.usym)
	}
	f.maxEnd = make([]uint64, len(f.syms))
	var end uint64
	for i, s := range f.syms {
		end = max(end, s.start+s.size)
		f.maxEnd[i] = end
	}
}

// compareRaw orders symbols by address, and at one address puts first
// the name to show: a symbol with a size, then a global one over a weak
// one over a local one, then the name with fewer leading underscores
// (malloc over __libc_malloc), then the first alphabetically.
func compareRaw(a, b rawSym) int {
	if c := cmp.Compare(a.start, b.start); c != 0 {
		return c
	}
	if (a.size == 0) != (b.size == 0) {
		if a.size != 0 {
			return -1
		}
		return 1
	}
	if c := cmp.Compare(bindRank(a.bind), bindRank(b.bind)); c != 0 {
		return c
	}
	if c := cmp.Compare(leadingUnderscores(a.name), leadingUnderscores(b.name)); c != 0 {
		return c
	}
	return strings.Compare(a.name, b.name)
}

func bindRank(b elf.SymBind) int {
	switch b {
	case elf.STB_GLOBAL:
		return 0
	case elf.STB_WEAK:
		return 1
	}
	return 2
}

func leadingUnderscores(name string) int {
	return len(name) - len(strings.TrimLeft(name, "_"))
}

// goFunctions reads the functions of a stripped Go binary from its
// .gopclntab, which the Go runtime needs and so is never stripped.
func goFunctions(ef *elf.File) []rawSym {
	pcln, text := ef.Section(".gopclntab"), ef.Section(".text")
	if pcln == nil || text == nil {
		return nil
	}
	data, err := pcln.Data()
	if err != nil {
		return nil
	}
	tab, err := gosym.NewTable(nil, gosym.NewLineTable(data, text.Addr))
	if err != nil {
		return nil
	}
	raw := make([]rawSym, 0, len(tab.Funcs))
	for _, fn := range tab.Funcs {
		raw = append(raw, rawSym{usym{start: fn.Entry, size: fn.End - fn.Entry, name: fn.Name}, elf.STB_GLOBAL})
	}
	return raw
}

// debugFile is the path of ef's separate debug file by build id, or "".
func debugFile(ef *elf.File) string {
	for _, p := range ef.Progs {
		if p.Type != elf.PT_NOTE {
			continue
		}
		data, err := readAll(p)
		if err != nil {
			continue
		}
		if id := buildID(data); len(id) > 1 {
			h := hex.EncodeToString(id)
			return debugDir + "/" + h[:2] + "/" + h[2:] + ".debug"
		}
	}
	return ""
}

func readAll(p *elf.Prog) ([]byte, error) {
	data := make([]byte, p.Filesz)
	_, err := p.ReadAt(data, 0)
	return data, err
}

// buildID finds the NT_GNU_BUILD_ID note in the contents of a PT_NOTE
// segment: 4-byte name size, descriptor size and type, then the name and
// the descriptor, each padded to 4 bytes.
func buildID(notes []byte) []byte {
	const ntGNUBuildID = 3
	for len(notes) >= 12 {
		le := func(b []byte) uint64 { return uint64(b[0]) | uint64(b[1])<<8 | uint64(b[2])<<16 | uint64(b[3])<<24 }
		namesz, descsz, typ := le(notes[0:]), le(notes[4:]), le(notes[8:])
		nameEnd := 12 + (namesz+3)&^3
		descEnd := nameEnd + (descsz+3)&^3
		if descEnd > uint64(len(notes)) {
			return nil
		}
		if typ == ntGNUBuildID && bytes.Equal(notes[12:12+namesz], []byte("GNU\x00")) {
			return notes[nameEnd : nameEnd+descsz]
		}
		notes = notes[descEnd:]
	}
	return nil
}

// loadVDSO reads the kernel's vDSO image from this process's own memory:
// every process of the same kind maps the same one.
func (f *objFile) loadVDSO() {
	image, err := ownVDSO()
	if err != nil {
		return
	}
	ef, err := elf.NewFile(bytes.NewReader(image))
	if err != nil {
		return
	}
	f.memSize = uint64(len(image))
	f.readELF(ef)
}

// ownVDSO returns a copy of this process's vDSO.
func ownVDSO() ([]byte, error) {
	data, err := os.ReadFile("/proc/self/maps")
	if err != nil {
		return nil, fmt.Errorf("read own maps: %w", err)
	}
	maps, err := parseMaps(string(data))
	if err != nil {
		return nil, fmt.Errorf("parse own maps: %w", err)
	}
	i := slices.IndexFunc(maps, func(m mapping) bool { return m.path == "[vdso]" })
	if i < 0 {
		return nil, errors.New("no vDSO mapped")
	}
	mem, err := os.Open("/proc/self/mem")
	if err != nil {
		return nil, fmt.Errorf("read vDSO: %w", err)
	}
	defer mem.Close()
	image := make([]byte, maps[i].end-maps[i].start)
	if _, err := mem.ReadAt(image, int64(maps[i].start)); err != nil {
		return nil, fmt.Errorf("read vDSO: %w", err)
	}
	return image, nil
}

// vaddr turns addr, inside mapping m of this file, into a virtual address
// as the ELF file's symbols give them.
func (f *objFile) vaddr(m mapping, addr uint64) (uint64, bool) {
	if f.memSize != 0 && m.end-m.start != f.memSize {
		return 0, false // a vDSO unlike ours, such as a 32-bit process's
	}
	if f.exec {
		return addr, true
	}
	off := addr - m.start + m.offset
	for _, s := range f.loads {
		if off >= s.offset && off < s.offset+s.filesz {
			return off - s.offset + s.vaddr, true
		}
	}
	return 0, false
}

// lookup returns the index of the symbol covering vaddr: one whose
// [start, start+size) contains it or, when the nearest symbol below has
// no size, that one.
func (f *objFile) lookup(vaddr uint64) (int, bool) {
	// i is the last symbol starting at or below vaddr.
	lo, hi := 0, len(f.syms)
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		if f.syms[mid].start <= vaddr {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	i := lo - 1
	if i < 0 {
		return 0, false
	}
	if f.syms[i].size == 0 {
		return i, true
	}
	// Symbols can nest; walk down while one further down may still
	// reach vaddr.
	for j := i; j >= 0 && f.maxEnd[j] > vaddr; j-- {
		if s := f.syms[j]; s.start+s.size > vaddr {
			return j, true
		}
	}
	return 0, false
}

// name returns the printable name of symbol i, C++ names demangled.
func (f *objFile) name(i int) string {
	s := f.syms[i]
	if !s.mangled {
		return s.name
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if name, ok := f.demangled[i]; ok {
		return name
	}
	if f.demangled == nil {
		f.demangled = map[int]string{}
	}
	name := demangle.Filter(s.name)
	f.demangled[i] = name
	return name
}
