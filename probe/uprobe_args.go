package probe

import (
	"strings"

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
