package codegen

import (
	"strings"

	"github.com/cilium/ebpf/asm"
	"github.com/cilium/ebpf/btf"

	"gtrace/lang/ast"
	"gtrace/lang/token"
)

// Source is where generated instructions come from: a statement, or the
// probe's attach point for its prologue. cilium/ebpf emits its text as
// the instruction's BTF line info, which the verifier's log quotes, and
// an instruction the verifier refuses leads back to its Span.
type Source struct {
	Span token.Span
	Text string
}

func (s *Source) String() string { return s.Text }

// SourceAt returns the source of the instruction at raw offset off: the
// last one given at or before it, as line info reads.
func SourceAt(insns asm.Instructions, off asm.RawInstructionOffset) *Source {
	var src *Source
	iter := insns.Iterate()
	for iter.Next() && iter.Offset <= off {
		if s, ok := iter.Ins.Source().(*Source); ok {
			src = s
		}
	}
	return src
}

// source describes n, with its text, up to the end of its first line,
// when the file is known.
func (g *gen) source(n ast.Node) *Source {
	s := &Source{Span: n.Span()}
	if f := g.opts.File; f != nil && s.Span.Start >= 0 && int(s.Span.End) <= len(f.Src) && s.Span.Start <= s.Span.End {
		text, _, _ := strings.Cut(string(f.Src[s.Span.Start:s.Span.End]), "\n")
		s.Text = strings.TrimSpace(text)
	}
	return s
}

// setSource makes the next instructions come from n, and returns the
// source they came from before, for restoreSource.
func (g *gen) setSource(n ast.Node) *Source {
	prev := g.src
	g.src, g.srcPending = g.source(n), true
	return prev
}

// restoreSource makes the next instructions come from prev again: the
// rest of a statement that held the one just generated.
func (g *gen) restoreSource(prev *Source) {
	g.src, g.srcPending = prev, prev != nil
}

// funcEntry makes in the first instruction of the BPF function fn, with
// the current source: once a program has line info, the kernel wants it
// at the start of every function.
func (g *gen) funcEntry(in asm.Instruction, fn *btf.Func) asm.Instruction {
	if g.src != nil {
		in = in.WithSource(g.src)
	}
	return btf.WithFuncMetadata(in, fn)
}
