package symbol

import (
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
)

// kernelAddrSpace is the lowest address bcc, and so bpftrace, accepts as
// a kernel symbol; lower ones are per-CPU offsets, not code.
const kernelAddrSpace = 0x00ffffffffffffff

// Kernel resolves kernel addresses using /proc/kallsyms, which it reads
// once, on first use. The zero value is ready to use and safe for
// concurrent use.
type Kernel struct {
	once  sync.Once
	err   error
	syms  []ksym            // code symbols sorted by address
	addrs map[string]uint64 // every symbol's first address in file order
}

type ksym struct {
	addr uint64
	name string
}

// Load reads /proc/kallsyms if that has not happened yet and returns the
// error, if any, that reading it gave. Resolve and Addr report failure
// only as !ok, so call Load to learn why.
func (k *Kernel) Load() error {
	k.once.Do(func() {
		data, err := readKallsyms()
		if err != nil {
			k.err = fmt.Errorf("read kallsyms: %w", err)
			return
		}
		k.syms, k.addrs, k.err = parseKallsyms(data)
	})
	return k.err
}

// Resolve returns the symbol containing addr and addr's offset into it.
// Like bcc, it only considers code symbols and takes the nearest one below
// addr, whatever its size.
func (k *Kernel) Resolve(addr uint64) (name string, offset uint64, ok bool) {
	if k.Load() != nil {
		return "", 0, false
	}
	// The first symbol above addr; the one before it contains addr.
	i := sort.Search(len(k.syms), func(i int) bool { return k.syms[i].addr > addr })
	if i == 0 {
		return "", 0, false
	}
	// Several symbols can share an address; report the first one listed.
	for i > 1 && k.syms[i-2].addr == k.syms[i-1].addr {
		i--
	}
	s := k.syms[i-1]
	return s.name, addr - s.addr, true
}

// Addr returns the address of the first kallsyms entry called name, data
// symbols included, which is what bpftrace's kaddr() returns.
func (k *Kernel) Addr(name string) (uint64, bool) {
	if k.Load() != nil {
		return 0, false
	}
	addr, ok := k.addrs[name]
	return addr, ok
}

// readKallsyms reads /proc/kallsyms into one string that symbol names can
// share. procfs reports a size of 0, so os.ReadFile would grow its buffer
// from nothing; starting big avoids most of that copying.
func readKallsyms() (string, error) {
	f, err := os.Open("/proc/kallsyms")
	if err != nil {
		return "", err
	}
	defer f.Close()
	var b strings.Builder
	b.Grow(8 << 20)
	if _, err := io.Copy(&b, f); err != nil {
		return "", err
	}
	return b.String(), nil
}

var errHiddenAddrs = errors.New("/proc/kallsyms shows no addresses: reading them needs root (CAP_SYSLOG) and kernel.kptr_restrict below 2")

// parseKallsyms parses lines like "ffffffff816b89f0 T vfs_read" or
// "ffffffffc0201000 t foo\t[module]". It avoids regexp and per-line
// allocation since there are hundreds of thousands of lines.
func parseKallsyms(data string) ([]ksym, map[string]uint64, error) {
	var (
		syms    []ksym
		addrs   = make(map[string]uint64, strings.Count(data, "\n"))
		nonzero bool
	)
	for len(data) > 0 {
		line, rest, _ := strings.Cut(data, "\n")
		data = rest

		hexAddr, rest, ok := strings.Cut(line, " ")
		if !ok || len(rest) < 3 || rest[1] != ' ' {
			continue
		}
		typ, name := rest[0], rest[2:]
		// Module symbols carry "\t[module]" after the name.
		if i := strings.IndexByte(name, '\t'); i >= 0 {
			name = name[:i]
		}
		addr, err := strconv.ParseUint(hexAddr, 16, 64)
		if err != nil {
			return nil, nil, fmt.Errorf("parse kallsyms line %q: %w", line, err)
		}
		if addr != 0 {
			nonzero = true
		}

		if _, dup := addrs[name]; !dup {
			addrs[name] = addr
		}
		if addr != 0 && addr >= kernelAddrSpace && !isData(typ) {
			syms = append(syms, ksym{addr, name})
		}
	}
	if !nonzero {
		return nil, nil, errHiddenAddrs
	}
	slices.SortStableFunc(syms, func(a, b ksym) int {
		switch {
		case a.addr < b.addr:
			return -1
		case a.addr > b.addr:
			return 1
		}
		return 0
	})
	return syms, addrs, nil
}

// isData reports whether a kallsyms type letter is a data symbol (bss,
// data or read-only data), which bcc leaves out of symbolization.
func isData(typ byte) bool {
	switch typ {
	case 'b', 'B', 'd', 'D', 'r', 'R':
		return true
	}
	return false
}
