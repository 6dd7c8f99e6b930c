package token

import "sort"

// Pos is a byte offset into a File's source. NoPos marks a node that has no
// place in the source, such as one made by a pass.
type Pos int

// NoPos is the zero Pos, used for synthesized nodes.
const NoPos Pos = -1

// Span is the half-open byte range [Start, End) of a node or token.
type Span struct {
	Start, End Pos
}

// Position is a human-readable location: 1-based line and column.
type Position struct {
	Filename string
	Line     int
	Column   int
}

// File is one source text, with its line starts indexed for Position.
type File struct {
	Name  string
	Src   []byte
	lines []int // offset of the first byte of each line
}

// NewFile indexes src's lines.
func NewFile(name string, src []byte) *File {
	f := &File{Name: name, Src: src, lines: []int{0}}
	for i, c := range src {
		if c == '\n' {
			f.lines = append(f.lines, i+1)
		}
	}
	return f
}

// Position converts p into a line and a column, both 1-based.
// Offsets past the end of the file clamp to its end.
func (f *File) Position(p Pos) Position {
	off := int(p)
	if off < 0 {
		off = 0
	}
	if off > len(f.Src) {
		off = len(f.Src)
	}
	i := sort.SearchInts(f.lines, off+1) - 1
	return Position{Filename: f.Name, Line: i + 1, Column: off - f.lines[i] + 1}
}

// Line returns the text of the 1-based line n, without its newline.
func (f *File) Line(n int) string {
	if n < 1 || n > len(f.lines) {
		return ""
	}
	start := f.lines[n-1]
	end := len(f.Src)
	if n < len(f.lines) {
		end = f.lines[n] - 1
	}
	return string(f.Src[start:end])
}
