package cpp

import (
	"sort"

	"gtrace/lang/diag"
	"gtrace/lang/token"
)

// Span maps a span of the expanded source back to the original source.
// An end inside an expansion moves to the end of its invocation, and a
// start to its beginning, so a span that touches an expansion covers the
// whole invocation.
func (r *Result) Span(sp token.Span) token.Span {
	if sp.Start == token.NoPos {
		return sp
	}
	start := r.pos(int(sp.Start), false)
	end := start
	if sp.End > sp.Start {
		end = r.pos(int(sp.End), true)
	}
	return token.Span{Start: token.Pos(start), End: token.Pos(end)}
}

// pos maps offset off of the expanded source. An end offset belongs to the
// text before it, a start offset to the text after it.
func (r *Result) pos(off int, isEnd bool) int {
	// The last segment that begins before off (or at it, for a start).
	i := sort.Search(len(r.segs), func(i int) bool {
		if isEnd {
			return r.segs[i].out >= off
		}
		return r.segs[i].out > off
	}) - 1
	if i < 0 {
		return off
	}
	s := r.segs[i]
	switch {
	case off >= s.outEnd:
		return s.inEnd + off - s.outEnd
	case isEnd:
		return s.inEnd
	}
	return s.in
}

// Errors returns errs, diagnostics of the expanded source, with their spans
// mapped back to the original source, or to the included file they are in.
func (r *Result) Errors(errs diag.List) diag.List {
	out := make(diag.List, len(errs))
	for i, e := range errs {
		c := *e
		c.File, c.Span = r.locate(e.Span)
		if len(e.Notes) > 0 {
			c.Notes = r.Errors(e.Notes)
		}
		out[i] = &c
	}
	return out
}

// locate maps sp as Span does, except that a span starting in the text of
// an included file maps to that file, which it returns; it returns nil
// for the original source.
func (r *Result) locate(sp token.Span) (*token.File, token.Span) {
	i := sort.Search(len(r.segs), func(i int) bool { return r.segs[i].out > int(sp.Start) }) - 1
	if sp.Start == token.NoPos || i < 0 {
		return nil, r.Span(sp)
	}
	s := r.segs[i]
	if s.inc == nil || int(sp.Start) >= s.out+s.incLen {
		return nil, r.Span(sp)
	}
	in := token.Span{Start: sp.Start - token.Pos(s.out), End: min(sp.End, token.Pos(s.out+s.incLen)) - token.Pos(s.out)}
	f, in := s.inc.locate(in)
	if f == nil {
		f = s.inc.source
	}
	return f, in
}
