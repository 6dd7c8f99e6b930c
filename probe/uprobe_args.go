package probe

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"

	"gtrace/kernel"
	"gtrace/symbol"
)

// uprobeParams lists a uprobe's function parameters for -lv, from the
// binary's DWARF: "int argc", "struct Foo* foo1". A binary without debug
// information lists none.
func uprobeParams(_ *lister, probe string) ([]string, error) {
	parts := strings.Split(probe, ":")
	if len(parts) != 3 {
		return nil, nil
	}
	d, err := symbol.DebugInfo(parts[1])
	if err != nil {
		return nil, nil
	}
	params, err := d.Params(parts[2])
	if err != nil {
		return nil, nil
	}
	out := make([]string, 0, len(params))
	for _, p := range params {
		out = append(out, symbol.CTypeName(p.Type)+" "+p.Name)
	}
	return out, nil
}

// withParams follows each probe a binary lists with its parameters,
// indented, when listing verbosely.
func (l *lister) withParams(ls *listing, probes []string, verbose bool) []string {
	if !verbose || ls.params == nil {
		return probes
	}
	var out []string
	for _, p := range probes {
		out = append(out, p)
		params, _ := ls.params(l, p)
		for _, param := range params {
			out = append(out, "    "+param)
		}
	}
	return out
}

// parseSourceUprobe accepts uprobe:BINARY@FILE:LINE[:COLUMN], a probe on
// the first statement of a source line, found in the binary's DWARF.
func parseSourceUprobe(kind Kind, name, target string, parts []string) ([]Probe, error) {
	binary, file, _ := strings.Cut(target, "@")
	if kind != Uprobe {
		return nil, errors.New("Source code location not allowed")
	}
	if kernel.HasWildcard(binary) {
		return nil, errors.New("Cannot use wildcards with source code location")
	}
	if file == "" || len(parts) < 1 || len(parts) > 2 || parts[0] == "" {
		return nil, errors.New("Invalid uprobe arguments, expected format: uprobe:TARGET@FILE:LINE[:COL]")
	}
	nums := make([]int, 2)
	for i, s := range parts {
		n, err := strconv.ParseUint(s, 10, 31)
		if err != nil {
			return nil, fmt.Errorf("Invalid line number: %s", s)
		}
		nums[i] = int(n)
	}
	path, err := symbol.ResolveBinary(binary)
	if err != nil {
		return nil, err
	}
	d, err := symbol.DebugInfo(path)
	if err != nil {
		return nil, fmt.Errorf("No DWARF debug info found for '%s', cannot attach by source code location.", path)
	}
	addr, err := d.LineAddress(file, nums[0], nums[1])
	if err != nil {
		return nil, err
	}
	return []Probe{{Kind: kind, Target: path, Address: addr,
		Name: name + ":" + path + "@" + file + ":" + strings.Join(parts, ":")}}, nil
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
