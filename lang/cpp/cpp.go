package cpp

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"gtrace/lang/diag"
	"gtrace/lang/scanner"
	"gtrace/lang/token"
)

const (
	// maxErrors is how many errors Preprocess reports before it gives up.
	maxErrors = 10
	// maxDepth bounds how deeply macro expansions nest.
	maxDepth = 64
	// maxOutput bounds the size in bytes of the expanded script, and of any
	// one expansion, so that macros that double at each level stop early.
	maxOutput = 1 << 20
	// maxExpansions bounds the number of macro invocations in a script,
	// since macros that expand to nothing can take exponential time
	// without growing the output.
	maxExpansions = 1 << 18
	// maxExprDepth bounds the nesting of an #if expression.
	maxExprDepth = 100
	// maxIncludeDepth bounds the nesting of #include, and maxIncludes the
	// files read in all, since a header that includes itself twice would
	// otherwise be read 2^depth times.
	maxIncludeDepth = 32
	maxIncludes     = 1000
)

// Options are the preprocessor's settings.
type Options struct {
	// IncludeDirs are searched in order for #include <FILE>, and for
	// #include "FILE" after the directory of the including file.
	IncludeDirs []string
	// Includes are included before the script, as --include gives them.
	Includes []string
}

// Result is a preprocessed script.
type Result struct {
	// File is the expanded source, with the original's name, for the parser.
	File *token.File
	// Includes lists the headers the script includes, as written between
	// the quotes or angle brackets, for later work with kernel types.
	Includes []string
	segs     []segment
	source   *token.File // the original source
}

// A segment is one replaced span: the expansion at [out, outEnd) of the
// expanded source stands for the invocation at [in, inEnd) of the original.
// Outside segments, the two texts are the same. The segment of an
// #include starts with the included file's expanded text, of length
// incLen, whose spans inc maps back to that file.
type segment struct {
	out, outEnd, in, inEnd int
	inc                    *Result
	incLen                 int
}

// macro is a #define.
type macro struct {
	name   string
	fn     bool // function-like, even with no parameters
	params []string
	body   []tok
}

// cond is an open #if, #ifdef or #ifndef.
type cond struct {
	name    string     // "if", "ifdef" or "ifndef"
	at      token.Span // the directive, for "unterminated" errors
	sawElse bool
}

// directive is one directive line.
type directive struct {
	name string     // "define", or "" for a line holding only '#'
	at   token.Span // from '#' to the end of the name
	toks []tok      // the tokens after the name
	end  int        // the offset of the newline that ends it
}

// bailout unwinds the whole run: too many errors, or a guard tripped.
type bailout struct{}

// pp preprocesses one file: the script, or a file it includes.
type pp struct {
	*shared
	src   []byte // the original source
	buf   []byte // src with directives and skipped groups turned to spaces
	sc    scanner.Scanner
	conds []cond
	depth int // how deeply this file is included, 0 for the script

	out      bytes.Buffer
	copied   int // how much of buf has gone to out
	res      *Result
	scanErrs diag.List // the parser reports these on the expanded source
}

// shared is the state of a run that included files share with the script.
type shared struct {
	opts     *Options
	errs     diag.List
	macros   map[string]*macro
	active   map[string]int  // macros being expanded, which must not recurse
	calls    int             // macro invocations so far
	includes int             // files included so far
	imported map[string]bool // files imported so far, by absolute path
}

// Preprocess runs the preprocessor over f; opts may be nil. It always
// returns a result; the list holds the errors, positioned in f or, with
// their File set, in a file it includes.
func Preprocess(f *token.File, opts *Options) (res *Result, errs diag.List) {
	if opts == nil {
		opts = &Options{}
	}
	sh := &shared{opts: opts, macros: map[string]*macro{}, active: map[string]int{}, imported: map[string]bool{}}
	// bpftrace passes -DBPFTRACE_HAVE_BTF to clang when the kernel has BTF,
	// which gtrace needs anyway.
	sh.macros["BPFTRACE_HAVE_BTF"] = &macro{name: "BPFTRACE_HAVE_BTF", body: []tok{{kind: tNumber, text: "1"}}}
	p := newPP(sh, f, 0)
	defer func() {
		if r := recover(); r != nil {
			if _, ok := r.(bailout); !ok {
				panic(r)
			}
		}
		p.finish()
		p.errs.Sort()
		res, errs = p.res, p.errs
	}()
	for _, h := range opts.Includes {
		p.preInclude(h)
	}
	p.run()
	return p.res, p.errs
}

func newPP(sh *shared, f *token.File, depth int) *pp {
	return &pp{shared: sh, src: f.Src, buf: bytes.Clone(f.Src), depth: depth, res: &Result{source: f}}
}

// finish copies the rest of the source to the output, once run returned
// or bailed out.
func (p *pp) finish() {
	p.copyTo(len(p.buf))
	p.res.File = token.NewFile(p.res.source.Name, p.out.Bytes())
}

func (p *pp) errorf(sp token.Span, format string, args ...any) {
	p.errs.Add(sp, format, args...)
	if len(p.errs) >= maxErrors {
		panic(bailout{})
	}
}

// fatalf reports an error after which preprocessing cannot go on.
func (p *pp) fatalf(sp token.Span, format string, args ...any) {
	p.errs.Add(sp, format, args...)
	panic(bailout{})
}

// run reads the script token by token with the bpftrace scanner, which
// knows where attach points, strings and comments are. The scanner reads
// buf as it goes, so the directive lines and skipped groups that are
// blanked ahead of it are only spaces when it gets there.
func (p *pp) run() {
	p.sc.Init(token.NewFile(p.res.source.Name, p.buf), &p.scanErrs)
	for {
		kind, lit, sp := p.sc.Scan()
		switch {
		case kind == token.EOF:
			for _, c := range p.conds {
				p.errorf(c.at, "unterminated #%s", c.name)
			}
			return
		case kind == token.CPREPROC || kind == token.ILLEGAL && lit == "#":
			if p.lineStart(int(sp.Start)) {
				p.directive(int(sp.Start))
			} else if kind == token.CPREPROC {
				p.errorf(sp, "a preprocessor directive must be at the start of a line")
			}
		case kind == token.IDENT && lit == "import" && p.lineStart(int(sp.Start)):
			p.importStmt(sp)
		case kind == token.IDENT || kind.IsKeyword():
			p.expandText(lit, sp)
		}
	}
}

// lineStart reports whether only blanks come before off on its line.
func (p *pp) lineStart(off int) bool {
	for off > 0 && p.buf[off-1] != '\n' {
		off--
		if p.buf[off] != ' ' && p.buf[off] != '\t' {
			return false
		}
	}
	return true
}

// blank turns buf[from:to] into spaces, keeping its newlines.
func (p *pp) blank(from, to int) {
	for i := from; i < to; i++ {
		if p.buf[i] != '\n' {
			p.buf[i] = ' '
		}
	}
}

// readDirective reads and blanks the directive whose '#' is at off.
func (p *pp) readDirective(off int) directive {
	toks, end := lexLine(p.buf, off+1, &p.errs)
	p.blank(off, end)
	d := directive{at: token.Span{Start: token.Pos(off), End: token.Pos(off + 1)}, end: end}
	if len(toks) > 0 {
		d.name, d.toks = toks[0].text, toks[1:]
		d.at.End = toks[0].span.End
		if toks[0].kind != tIdent {
			d.name = "?"
		}
	}
	return d
}

func (p *pp) directive(off int) {
	d := p.readDirective(off)
	switch d.name {
	case "":
		// A line holding only '#' is allowed and does nothing.
	case "define":
		p.define(d)
	case "undef":
		if name, ok := p.macroName(d); ok {
			delete(p.macros, name)
		}
	case "include":
		p.include(d)
	case "if", "ifdef", "ifndef":
		p.conds = append(p.conds, cond{name: d.name, at: d.at})
		if !p.test(d) {
			p.skipGroups(d, false)
		}
	case "elif", "else":
		if len(p.conds) == 0 {
			p.errorf(d.at, "#%s without #if", d.name)
			return
		}
		// The group before was compiled, so every group left is skipped.
		p.skipGroups(d, true)
	case "endif":
		if len(p.conds) == 0 {
			p.errorf(d.at, "#endif without #if")
			return
		}
		p.conds = p.conds[:len(p.conds)-1]
	case "error":
		p.errorf(d.at, "%s", strings.TrimSpace(string(p.src[d.at.Start:d.end])))
	default:
		p.errorf(d.at, "unknown preprocessor directive '%s'", p.src[d.at.Start:d.at.End])
	}
}

// macroName reads the name that #undef, #ifdef and #ifndef expect.
func (p *pp) macroName(d directive) (string, bool) {
	if len(d.toks) == 0 {
		p.errorf(d.at, "#%s expects a macro name", d.name)
		return "", false
	}
	if t := d.toks[0]; t.kind != tIdent {
		p.errorf(t.span, "macro names must be identifiers")
		return "", false
	}
	return d.toks[0].text, true
}

// test evaluates the condition of #if, #elif, #ifdef or #ifndef. A broken
// condition is reported and counts as false.
func (p *pp) test(d directive) bool {
	switch d.name {
	case "ifdef", "ifndef":
		name, ok := p.macroName(d)
		return ok && (p.macros[name] != nil) == (d.name == "ifdef")
	}
	return p.ifValue(d) != 0
}

// skipGroups skips the groups of the innermost conditional that follow
// directive d, which opened a group that is not compiled or, when done is
// set, ended one that was. It stops after the #endif, or in the group
// that an #elif or #else opens when that one is to be compiled.
func (p *pp) skipGroups(d directive, done bool) {
	c := &p.conds[len(p.conds)-1]
	for {
		if d.name == "else" || d.name == "elif" {
			if c.sawElse {
				p.errorf(d.at, "#%s after #else", d.name)
			}
			c.sawElse = c.sawElse || d.name == "else"
		}
		if d.name == "else" && !done || d.name == "elif" && !done && p.test(d) {
			return
		}
		var ok bool
		if d, ok = p.skip(d.end); !ok {
			return // reported as unterminated at the end
		}
		if d.name == "endif" {
			p.conds = p.conds[:len(p.conds)-1]
			return
		}
	}
}

// skip blanks the lines of a group that is not compiled, from off to the
// #elif, #else or #endif that ends it, which it reads and returns. Only
// comments and nested conditionals are looked at on the way, as C does.
func (p *pp) skip(off int) (directive, bool) {
	depth := 0
	inComment := false
	for off < len(p.buf) {
		lineEnd := off + bytes.IndexByte(p.buf[off:], '\n')
		if lineEnd < off {
			lineEnd = len(p.buf)
		}
		hash := off + len(p.buf[off:lineEnd]) - len(bytes.TrimLeft(p.buf[off:lineEnd], " \t"))
		if !inComment && hash < lineEnd && p.buf[hash] == '#' {
			toks, end := lexLine(p.buf, hash+1, nil)
			name := ""
			if len(toks) > 0 {
				name = toks[0].text
			}
			switch {
			case name == "if" || name == "ifdef" || name == "ifndef":
				depth++
			case depth > 0 && name == "endif":
				depth--
			case depth == 0 && (name == "endif" || name == "else" || name == "elif"):
				p.blank(off, hash)
				return p.readDirective(hash), true
			}
			p.blank(off, end)
			off = end + 1
			continue
		}
		inComment = commentAfter(p.buf[off:lineEnd], inComment)
		p.blank(off, lineEnd)
		off = lineEnd + 1
	}
	return directive{}, false
}

// commentAfter reports whether a block comment is open at the end of line,
// given whether one was open at its start.
func commentAfter(line []byte, inComment bool) bool {
	for i := 0; i < len(line); i++ {
		switch {
		case inComment:
			if line[i] == '*' && i+1 < len(line) && line[i+1] == '/' {
				inComment = false
				i++
			}
		case line[i] == '"':
			i = quoteEnd(line, i) - 1
		case line[i] == '/' && i+1 < len(line) && line[i+1] == '/':
			return false
		case line[i] == '/' && i+1 < len(line) && line[i+1] == '*':
			inComment = true
			i++
		}
	}
	return inComment
}

func (p *pp) include(d directive) {
	var header string
	quoted := false
	switch {
	case len(d.toks) == 1 && d.toks[0].kind == tString && d.toks[0].text[0] == '"':
		header, quoted = strings.Trim(d.toks[0].text, `"`), true
	case len(d.toks) >= 2 && d.toks[0].text == "<" && d.toks[len(d.toks)-1].text == ">":
		header = string(p.src[d.toks[0].span.End:d.toks[len(d.toks)-1].span.Start])
	default:
		p.errorf(d.at, `#include expects "FILE" or <FILE>`)
		return
	}
	p.res.Includes = append(p.res.Includes, header)
	name := token.Span{Start: d.toks[0].span.Start, End: d.toks[len(d.toks)-1].span.End}
	if path, ok := p.findInclude(header, quoted); ok {
		p.includeFile(d, name, path)
		return
	}
	if !knownHeader(header) {
		where := "the -I directories"
		if quoted {
			where = filepath.Dir(p.res.source.Name) + " or " + where
		}
		p.errorf(name, "'%s' file not found in %s, nor a system header gtrace knows", header, where)
		return
	}
	p.defineHeaderConstants(header)
}

// defineHeaderConstants defines the constants of a system header that
// gtrace knows without reading it.
func (p *pp) defineHeaderConstants(header string) {
	for _, c := range headerConstants(header) {
		if p.macros[c.name] != nil {
			continue // the script's own #define comes first
		}
		text := fmt.Sprint(c.value)
		if c.value < 0 {
			text = "(" + text + ")"
		}
		p.macros[c.name] = &macro{name: c.name, body: []tok{{kind: tNumber, text: text}}}
	}
}

// findInclude looks for an included file as bpftrace's clang does: a
// quoted name in the including file's directory first, then quoted and
// angled names alike in the -I directories.
func (p *pp) findInclude(header string, quoted bool) (string, bool) {
	if filepath.IsAbs(header) {
		return header, isFile(header)
	}
	var dirs []string
	if quoted {
		dirs = append(dirs, filepath.Dir(p.res.source.Name))
	}
	for _, dir := range append(dirs, p.opts.IncludeDirs...) {
		if path := filepath.Join(dir, header); isFile(path) {
			return path, true
		}
	}
	return "", false
}

// isFile reports whether path names something that is not a directory.
func isFile(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && !fi.IsDir()
}

// includeFile preprocesses the file at path, which directive d includes,
// and puts its expanded text, made one line, in place of d.
func (p *pp) includeFile(d directive, name token.Span, path string) {
	p.includes++
	switch {
	case p.depth >= maxIncludeDepth:
		p.fatalf(name, "#include nested more than %d deep", maxIncludeDepth)
	case p.includes > maxIncludes:
		p.fatalf(name, "more than %d files included", maxIncludes)
	}
	src, err := readInclude(path)
	if err != nil {
		p.errorf(name, "cannot read the included file: %v", err)
		return
	}
	q := p.preprocessIncluded(token.NewFile(path, src))
	p.res.Includes = append(p.res.Includes, q.res.Includes...)

	text := flatten(q.out.Bytes())
	start, end := int(d.at.Start), d.end
	p.copyTo(start)
	seg := segment{out: p.out.Len(), in: start, inEnd: end, inc: q.res, incLen: len(text)}
	p.out.Write(text)
	p.out.Write(p.buf[start:end]) // the blanked directive, with its lines
	seg.outEnd = p.out.Len()
	p.res.segs = append(p.res.segs, seg)
	p.copied = end
	if p.out.Len() > maxOutput {
		p.fatalf(name, "the expanded script is too large: more than %d bytes", maxOutput)
	}
}

// preprocessIncluded preprocesses f, a file that p includes, and puts
// the errors found in it in f, also when a guard stops the whole run.
func (p *pp) preprocessIncluded(f *token.File) *pp {
	q := newPP(p.shared, f, p.depth+1)
	n := len(p.errs)
	defer func() {
		// Errors in files that f includes are already in theirs.
		for _, e := range p.errs[n:] {
			if e.File == nil {
				e.File = f
			}
		}
	}()
	q.run()
	q.finish()
	return q
}

// readInclude reads an included file, which must be a regular file of at
// most maxOutput bytes: not a FIFO that would block, nor /dev/zero.
func readInclude(path string) ([]byte, error) {
	if fi, err := os.Stat(path); err != nil {
		return nil, err
	} else if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file", path)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	src, err := io.ReadAll(io.LimitReader(f, maxOutput+1))
	if err != nil {
		return nil, err
	}
	if len(src) > maxOutput {
		return nil, fmt.Errorf("%s is larger than %d bytes", path, maxOutput)
	}
	return src, nil
}

// flatten turns the expanded text of an included file into one line of
// the same length, so that the script keeps its lines and offsets in the
// text stay offsets in the file's expansion: comments and line breaks
// become spaces. An unterminated comment is kept, for the parser to
// report.
func flatten(src []byte) []byte {
	b := bytes.Clone(src)
	for i := 0; i < len(b); {
		switch {
		case b[i] == '"' || b[i] == '\'':
			end := quoteEnd(b, i)
			for ; i < end; i++ {
				if b[i] == '\n' {
					b[i] = ' '
				}
			}
		case b[i] == '/' && i+1 < len(b) && b[i+1] == '/':
			for ; i < len(b) && b[i] != '\n'; i++ {
				if b[i] == '\\' && i+1 < len(b) && b[i+1] == '\n' {
					b[i] = ' '
					i++
				}
				b[i] = ' '
			}
		case b[i] == '/' && i+1 < len(b) && b[i+1] == '*':
			end := bytes.Index(b[i+2:], []byte("*/"))
			if end < 0 {
				for ; i < len(b); i++ {
					if b[i] == '\n' {
						b[i] = ' '
					}
				}
				return b
			}
			for end += i + 4; i < end; i++ {
				b[i] = ' '
			}
		default:
			if b[i] == '\n' {
				b[i] = ' '
			}
			i++
		}
	}
	return b
}

func (p *pp) define(d directive) {
	name, ok := p.macroName(d)
	if !ok {
		return
	}
	if name == "defined" {
		p.errorf(d.toks[0].span, "'defined' cannot be used as a macro name")
		return
	}
	m := &macro{name: name}
	body := d.toks[1:]
	// A '(' right after the name, with no space, opens a parameter list.
	if len(body) > 0 && body[0].text == "(" && !body[0].space {
		m.fn = true
		if m.params, body, ok = p.params(d, name, body[1:]); !ok {
			return
		}
	}
	for _, t := range body {
		if t.text == "#" || t.text == "##" {
			p.errorf(t.span, "the '%s' operator is not supported in macros", t.text)
			return
		}
	}
	if len(body) > 0 {
		body[0].space = false
	}
	m.body = body
	p.macros[name] = m
}

// params reads the parameters of macro name, after its '(', and returns
// them and the tokens after the ')'.
func (p *pp) params(d directive, name string, toks []tok) ([]string, []tok, bool) {
	var params []string
	if len(toks) > 0 && toks[0].text == ")" {
		return params, toks[1:], true
	}
	for i := 0; i < len(toks); i += 2 {
		t := toks[i]
		switch {
		case t.text == "...":
			p.errorf(t.span, "variadic macros are not supported")
			return nil, nil, false
		case t.kind != tIdent:
			p.errorf(t.span, "macro parameters must be identifiers")
			return nil, nil, false
		case index(params, t.text) >= 0:
			p.errorf(t.span, "duplicate macro parameter '%s'", t.text)
			return nil, nil, false
		}
		params = append(params, t.text)
		if i+1 < len(toks) && toks[i+1].text == ")" {
			return params, toks[i+2:], true
		}
		if i+1 < len(toks) && toks[i+1].text != "," {
			p.errorf(toks[i+1].span, "expected ',' or ')' in the parameters of macro '%s'", name)
			return nil, nil, false
		}
	}
	p.errorf(d.at, "missing ')' in the parameters of macro '%s'", name)
	return nil, nil, false
}

func index(list []string, s string) int {
	for i, x := range list {
		if x == s {
			return i
		}
	}
	return -1
}

// expandText expands the macro invocation, if any, that starts with the
// identifier name at sp in the script's text.
func (p *pp) expandText(name string, sp token.Span) {
	m := p.macros[name]
	if m == nil {
		return
	}
	var args [][]tok
	at := sp
	if m.fn {
		save := p.sc
		k, _, lparen := p.sc.Scan()
		if k != token.LPAREN {
			p.sc = save // a function-like macro's name alone is just a name
			return
		}
		var ok bool
		if args, at, ok = p.scanArgs(m, sp, lparen); !ok {
			return
		}
	}
	exp := list{p: p}
	p.invoke(&exp, m, args, at, 1)
	p.replace(at, exp.toks)
}

// scanArgs reads the arguments of a function-like macro from the script,
// after its '('. It returns them and the span of the whole invocation.
func (p *pp) scanArgs(m *macro, name, lparen token.Span) ([][]tok, token.Span, bool) {
	args := [][]tok{nil}
	prevEnd := lparen.End
	for depth := 0; ; {
		kind, _, sp := p.sc.Scan()
		switch {
		case kind == token.EOF:
			p.errorf(name, "unterminated invocation of macro '%s'", m.name)
			return nil, name, false
		case kind == token.CPREPROC || kind == token.ILLEGAL && p.buf[sp.Start] == '#' && p.lineStart(int(sp.Start)):
			p.errorf(sp, "preprocessor directive in the arguments of macro '%s'", m.name)
			return nil, name, false
		case kind == token.RPAREN && depth == 0:
			return args, token.Span{Start: name.Start, End: sp.End}, true
		case kind == token.COMMA && depth == 0:
			args = append(args, nil)
			prevEnd = sp.End
			continue
		case kind == token.LPAREN:
			depth++
		case kind == token.RPAREN:
			depth--
		}
		t := tok{kind: tPunct, text: string(p.buf[sp.Start:sp.End]), span: sp, space: sp.Start > prevEnd}
		switch {
		case kind == token.IDENT || kind.IsKeyword():
			t.kind = tIdent
		case kind == token.INT:
			t.kind = tNumber
		case kind == token.STRING:
			t.kind = tString
		case kind == token.VAR || kind == token.POSITIONAL || kind == token.MAP || kind == token.PROBE:
			t.kind = tVar
		}
		args[len(args)-1] = append(args[len(args)-1], t)
		prevEnd = sp.End
	}
}

// replace puts the expansion toks in place of the invocation at in the
// output, and records the segment that maps it back.
func (p *pp) replace(at token.Span, toks []tok) {
	start, end := int(at.Start), int(at.End)
	p.copyTo(start)
	seg := segment{out: p.out.Len(), in: start, inEnd: end}
	text := spell(toks)
	if text != "" {
		if b := p.out.Bytes(); len(b) > 0 && joins(b[len(b)-1], text[0]) {
			p.out.WriteByte(' ')
		}
		p.out.WriteString(text)
		if end < len(p.buf) && joins(text[len(text)-1], p.buf[end]) {
			p.out.WriteByte(' ')
		}
	}
	// Keep the line structure: the newlines the invocation spanned, then
	// spaces up to the column where the text after it starts.
	if n := bytes.Count(p.src[start:end], []byte("\n")); n > 0 {
		p.out.WriteString(strings.Repeat("\n", n))
		col := end - (bytes.LastIndexByte(p.src[:end], '\n') + 1)
		p.out.WriteString(strings.Repeat(" ", col))
	}
	seg.outEnd = p.out.Len()
	p.res.segs = append(p.res.segs, seg)
	p.copied = end
	if p.out.Len() > maxOutput {
		p.fatalf(at, "the expanded script is too large: more than %d bytes", maxOutput)
	}
}

// copyTo copies the script's text up to off to the output.
func (p *pp) copyTo(off int) {
	if off > p.copied {
		p.out.Write(p.buf[p.copied:off])
		p.copied = off
	}
}
