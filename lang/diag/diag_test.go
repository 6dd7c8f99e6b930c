package diag

import (
	"bytes"
	"testing"

	"gtrace/lang/token"
)

func span(start, end int) token.Span {
	return token.Span{Start: token.Pos(start), End: token.Pos(end)}
}

func TestRender(t *testing.T) {
	f := token.NewFile("x.bt", []byte("BEGIN {\n\t@x = 1;\n}\n"))
	var l List
	l.Warn(span(9, 11), "unused map %s", "@x")
	l.Add(span(0, 5), "bad %s", "probe")
	l.Add(span(6, 15), "spans lines")
	l.Add(span(21, 21), "at the end")
	l.Add(token.Span{Start: token.NoPos, End: token.NoPos}, "nowhere")
	var b bytes.Buffer
	Render(&b, f, l)
	// Errors come before warnings. Several lines print whole, with no
	// underline (bpftrace v0.26; 0.17 printed only the header). Line 4 is
	// empty, as bpftrace v0.26 prints an empty source line.
	want := `x.bt:1:1-6: ERROR: bad probe
BEGIN {
~~~~~
x.bt:1-2: ERROR: spans lines
BEGIN {
	@x = 1;
x.bt:4:1-1: ERROR: at the end


ERROR: nowhere
x.bt:2:2-4: WARNING: unused map @x
    @x = 1;
    ~~
`
	if got := b.String(); got != want {
		t.Errorf("Render:\n%s\nwant:\n%s", got, want)
	}
}

func TestRenderOtherFile(t *testing.T) {
	f := token.NewFile("x.bt", []byte("#include \"h.h\"\n"))
	h := token.NewFile("dir/h.h", []byte("// h\nstruct s { x };\n"))
	l := List{{Span: span(16, 17), Msg: "bad", File: h}}
	var b bytes.Buffer
	Render(&b, f, l)
	want := "dir/h.h:2:12-13: ERROR: bad\nstruct s { x };\n           ~\n"
	if got := b.String(); got != want {
		t.Errorf("Render:\n%s\nwant:\n%s", got, want)
	}
}

func TestList(t *testing.T) {
	var l List
	if l.Err() != nil {
		t.Errorf("empty list: Err() = %v, want nil", l.Err())
	}
	l.Add(span(5, 6), "second")
	l.Add(span(1, 2), "first")
	l.Sort()
	if l[0].Msg != "first" {
		t.Errorf("after Sort, first is %q", l[0].Msg)
	}
	if got := l.Err().Error(); got != "first (and 1 more errors)" {
		t.Errorf("Error() = %q", got)
	}
	if l.HasErrors() != true || (List{{Warning: true}}).HasErrors() {
		t.Errorf("HasErrors wrong")
	}
}
