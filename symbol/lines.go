package symbol

import (
	"debug/dwarf"
	"debug/elf"
	"sync"
)

// SourceLine is a place in a source file.
type SourceLine struct {
	File string
	Line int
}

// Inlined is a function inlined at an address, and where in it the
// address (or the next inlined call) is.
type Inlined struct {
	Name string
	At   SourceLine
}

// LineInfo is what a binary's DWARF says of an address: where in the
// source of its function it is, and the functions inlined there,
// innermost first. With inlined functions, At is the place of the
// outermost inlined call.
type LineInfo struct {
	At      SourceLine
	Inlined []Inlined
}

// lineCache holds the line information already looked up, by binary
// and address.
var lineCache = struct {
	sync.Mutex
	m map[lineKey]lineResult
}{m: map[lineKey]lineResult{}}

type lineKey struct {
	path  string
	vaddr uint64
}

type lineResult struct {
	info LineInfo
	ok   bool
}

// Lines returns the line information of virtual address vaddr in the
// binary at path; ok is false when its DWARF (if any) has none.
func Lines(path string, vaddr uint64) (LineInfo, bool) {
	key := lineKey{path, vaddr}
	lineCache.Lock()
	r, done := lineCache.m[key]
	lineCache.Unlock()
	if done {
		return r.info, r.ok
	}
	if d, err := DebugInfo(path); err == nil {
		r.info, r.ok = d.lineInfo(vaddr)
	}
	lineCache.Lock()
	lineCache.m[key] = r
	lineCache.Unlock()
	return r.info, r.ok
}

// lineInfo finds the unit holding vaddr, its line table's row for it,
// and the inlined calls around it. Split DWARF keeps the functions
// apart from the line table; there only the line is given.
func (d *Debug) lineInfo(vaddr uint64) (LineInfo, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	r := d.lines.Reader()
	cu, err := r.SeekPC(vaddr)
	if err != nil || cu == nil {
		return LineInfo{}, false
	}
	lr, err := d.lines.LineReader(cu)
	if err != nil || lr == nil {
		return LineInfo{}, false
	}
	var row dwarf.LineEntry
	if lr.SeekPC(vaddr, &row) != nil || row.File == nil {
		return LineInfo{}, false
	}
	info := LineInfo{At: SourceLine{row.File.Name, row.Line}}
	if d.info != d.lines {
		return info, true
	}
	// The chain of inlined calls holding vaddr, outermost first.
	chain := d.inlinedAt(r, vaddr)
	files := lr.Files()
	at := info.At
	for i := len(chain) - 1; i >= 0; i-- {
		e := chain[i]
		info.Inlined = append(info.Inlined, Inlined{Name: d.originName(e), At: at})
		at = callSite(e, files)
	}
	info.At = at
	return info, true
}

// inlinedAt walks the unit's entries after the reader's position and
// returns the inlined subroutines whose ranges hold vaddr, outermost
// first.
func (d *Debug) inlinedAt(r *dwarf.Reader, vaddr uint64) []*dwarf.Entry {
	var chain []*dwarf.Entry
	depth := 0
	for {
		e, err := r.Next()
		if err != nil || e == nil {
			return chain
		}
		if e.Tag == 0 {
			if depth--; depth < 0 {
				return chain
			}
			continue
		}
		holds := contains(d.info, e, vaddr)
		switch e.Tag {
		case dwarf.TagSubprogram, dwarf.TagLexDwarfBlock, dwarf.TagInlinedSubroutine:
			if !holds {
				if e.Children {
					r.SkipChildren()
				}
				continue
			}
			if e.Tag == dwarf.TagInlinedSubroutine {
				chain = append(chain, e)
			}
		default:
			if e.Children {
				r.SkipChildren()
			}
			continue
		}
		if e.Children {
			depth++
		}
	}
}

// contains says whether entry e's address ranges hold vaddr.
func contains(data *dwarf.Data, e *dwarf.Entry, vaddr uint64) bool {
	ranges, err := data.Ranges(e)
	if err != nil {
		return false
	}
	for _, rg := range ranges {
		if vaddr >= rg[0] && vaddr < rg[1] {
			return true
		}
	}
	return false
}

// originName is the name of the function an inlined subroutine entry
// is an instance of.
func (d *Debug) originName(e *dwarf.Entry) string {
	for range 4 { // an origin may point at a declaration, and so on
		if name, ok := e.Val(dwarf.AttrName).(string); ok {
			return name
		}
		off, ok := e.Val(dwarf.AttrAbstractOrigin).(dwarf.Offset)
		if !ok {
			off, ok = e.Val(dwarf.AttrSpecification).(dwarf.Offset)
		}
		if !ok {
			return ""
		}
		r := d.info.Reader()
		r.Seek(off)
		next, err := r.Next()
		if err != nil || next == nil {
			return ""
		}
		e = next
	}
	return ""
}

// callSite is where an inlined subroutine entry was called from.
func callSite(e *dwarf.Entry, files []*dwarf.LineFile) SourceLine {
	var at SourceLine
	if i, ok := e.Val(dwarf.AttrCallFile).(int64); ok && i >= 0 && int(i) < len(files) && files[i] != nil {
		at.File = files[i].Name
	}
	if n, ok := e.Val(dwarf.AttrCallLine).(int64); ok {
		at.Line = int(n)
	}
	return at
}

// elfSymbols are the symbol tables of binaries read so far, for
// symbolizing by the binary alone.
var elfSymbols = struct {
	sync.Mutex
	m map[string]*objFile
}{m: map[string]*objFile{}}

// ELFSymbol returns the function of the binary at path whose range holds
// virtual address vaddr (or which starts there), and vaddr's offset in
// it, from the binary's symbol table alone: the process whose address it
// was may be gone.
func ELFSymbol(path string, vaddr uint64) (name string, offset uint64, ok bool) {
	elfSymbols.Lock()
	f, done := elfSymbols.m[path]
	if !done {
		f = &objFile{}
		if ef, err := elf.Open(path); err == nil {
			f.readELF(ef)
			ef.Close()
		}
		elfSymbols.m[path] = f
	}
	elfSymbols.Unlock()
	i, found := f.lookup(vaddr)
	if !found {
		return "", 0, false
	}
	s := f.syms[i]
	if vaddr != s.start && vaddr >= s.start+s.size {
		return "", 0, false
	}
	return f.name(i), vaddr - s.start, true
}
