package unwind

import (
	"debug/elf"
	"fmt"

	"gtrace/symbol"
)

// ProcessRows builds the unwind table of process pid: the rows of every
// file it maps executable, moved to where the file is loaded, sorted by
// address. Addresses outside the mappings have no row or one of kind
// None, and so do the mappings of files whose tables cannot be read,
// where unwinding stops.
func ProcessRows(pid int) ([]Row, error) {
	maps, err := symbol.ExecMappings(pid)
	if err != nil {
		return nil, err
	}
	root := symbol.ProcessRoot(pid)
	files := map[string]*loaded{}
	var out []Row
	for _, m := range maps {
		l, ok := files[m.Path]
		if !ok {
			// map_files reaches a mapped file even when it is deleted
			// or a memfd; its path, through the process's root, when
			// map_files is not readable.
			l, err = load(fmt.Sprintf("/proc/%d/map_files/%x-%x", pid, m.Start, m.End))
			if err != nil {
				l, _ = load(root + m.Path)
			}
			files[m.Path] = l
		}
		if l != nil {
			out = appendMapping(out, l, m)
		}
	}
	return out, nil
}

// loaded is a file's rows and program headers.
type loaded struct {
	rows  []Row
	progs []elf.ProgHeader
}

func load(path string) (*loaded, error) {
	f, err := elf.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	rows, err := FileRows(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	l := &loaded{rows: rows}
	for _, p := range f.Progs {
		if p.Type == elf.PT_LOAD {
			l.progs = append(l.progs, p.ProgHeader)
		}
	}
	return l, nil
}

// appendMapping adds the rows of the part of a file that mapping m
// loads, at their loaded addresses, and a row of kind None at its end.
func appendMapping(out []Row, l *loaded, m symbol.Mapping) []Row {
	bias, ok := l.bias(m)
	if !ok {
		return out
	}
	lo, hi := m.Start-bias, m.End-bias
	// The row in effect at the mapping's start, then those inside it.
	if r, ok := Lookup(l.rows, lo); ok && r.Addr < lo {
		r.Addr = lo
		out = appendRow(out, r, bias)
	}
	for _, r := range l.rows {
		if r.Addr >= lo && r.Addr < hi {
			out = appendRow(out, r, bias)
		}
	}
	return appendRow(out, Row{Addr: hi}, bias)
}

func appendRow(out []Row, r Row, bias uint64) []Row {
	r.Addr += bias
	if n := len(out); n > 0 && out[n-1].Addr >= r.Addr {
		// Mappings come in address order; a row of the one before that
		// does not end before this starts gives way.
		for n > 0 && out[n-1].Addr >= r.Addr {
			n--
		}
		out = out[:n]
	}
	return append(out, r)
}

// bias is what the addresses of the file are moved by in mapping m: the
// load segment holding the mapping's file offset says where it belongs.
func (l *loaded) bias(m symbol.Mapping) (uint64, bool) {
	for _, p := range l.progs {
		start := p.Off &^ (pageSize - 1)
		if m.Offset >= start && m.Offset < p.Off+p.Filesz {
			return m.Start - m.Offset - p.Vaddr + p.Off, true
		}
	}
	return 0, false
}

const pageSize = 4096
