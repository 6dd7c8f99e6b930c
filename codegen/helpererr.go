package codegen

import (
	"github.com/cilium/ebpf/asm"

	"gtrace/lang/ast"
)

// Helper names in -k warnings, as bpftrace names the helpers.
const (
	helperMapLookup = "map_lookup_elem"
	helperReadUser  = "probe_read_user"
	helperReadKern  = "probe_read_kernel"
)

// probeReadError, with -k (Options.HelperErrors), warns at e when the
// probe read just called failed, with its error code. R0, the helper's
// result, is kept. The read is named by the side its probe runs on:
// gtrace reads both with bpf_probe_read, bpftrace by the pointer's
// address space, which for a user-space probe's arguments is the user's.
func (g *gen) probeReadError(e ast.Expr) {
	if !g.opts.HelperErrors {
		return
	}
	helper := helperReadKern
	if g.prog.Probe.UserSpace() {
		helper = helperReadUser
	}
	ok := g.newLabel()
	g.emit(asm.JEq.Imm(asm.R0, 0, ok))
	buf := g.helperError(helper, e)
	g.emit(asm.LoadMem(asm.R0, regScratch, int16(buf+eventHeader), asm.DWord))
	g.place(ok)
}

// lookupError, with -k, warns at m that the map has no value for the
// key being read: bpftrace's lookup failure, whose code is always 0.
func (g *gen) lookupError(m *ast.Map) {
	if !g.opts.HelperErrors {
		return
	}
	g.emit(asm.Mov.Imm(asm.R0, 0))
	g.helperError(helperMapLookup, m)
}

// helperError sends an EvHelperError record of the error code in R0 for
// helper at e, and returns the record's scratch offset.
func (g *gen) helperError(helper string, e ast.Node) int {
	id := len(g.out.Events)
	g.out.Events = append(g.out.Events, &Event{Kind: EvHelperError, Format: helper,
		Offsets: []int{eventHeader}, Size: eventHeader + 8, At: e.Span()})
	buf := g.alloc(eventHeader + 8)
	g.emit(asm.StoreMem(regScratch, int16(buf+eventHeader), asm.R0, asm.DWord))
	g.send(id, buf, eventHeader+8)
	return buf
}
