package diag_test

import (
	"bytes"
	"testing"

	"gtrace/lang/diag"
	"gtrace/lang/token"
)

// TestRenderNotes prints each note right after its diagnostic, in its
// kind: errors and their notes first, then warnings and theirs.
func TestRenderNotes(t *testing.T) {
	f := token.NewFile("stdin", []byte("abc def"))
	at := func(start, end int) token.Span { return token.Span{Start: token.Pos(start), End: token.Pos(end)} }
	errs := diag.List{
		{Span: at(0, 1), Msg: "careful", Warning: true, Notes: []*diag.Error{{Span: at(4, 7), Msg: "from here"}}},
		{Span: at(4, 5), Msg: "wrong", Notes: []*diag.Error{{Span: at(1, 3), Msg: "expanded from"}, {Span: at(0, 7), Msg: "and from"}}},
	}
	var b bytes.Buffer
	diag.Render(&b, f, errs)
	want := `stdin:1:5-6: ERROR: wrong
abc def
    ~
stdin:1:2-4: ERROR: expanded from
abc def
 ~~
stdin:1:1-8: ERROR: and from
abc def
~~~~~~~
stdin:1:1-2: WARNING: careful
abc def
~
stdin:1:5-8: WARNING: from here
abc def
    ~~~
`
	if b.String() != want {
		t.Errorf("rendered\n%s\nwant\n%s", b.String(), want)
	}
}
