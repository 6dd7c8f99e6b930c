package codegen

import "gtrace/probe"

// returnLabel is the label of the return a `return expr` jumps to with
// its value, for the probes whose return value gtrace reads: a test
// passes when it returns 0, a benchmark is skipped when it does not.
// Other probes return 0, as the verifier wants of some program types.
// A return inside a loop body, a callback of its own, still returns 0.
func (g *gen) returnLabel() string {
	if k := g.prog.Probe.Kind; k != probe.Test && k != probe.Bench {
		return ""
	}
	return g.newLabel()
}
