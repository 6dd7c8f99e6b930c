package cpp

import (
	"path/filepath"

	"gtrace/lang/token"
)

// preInclude includes header before the script's first line, as
// bpftrace's --include FILE (clang's -include) does: a file found in the
// working directory or the -I directories is read, else a system header
// gtrace knows defines its constants. Its text goes before the script's,
// on the script's first line, so the script keeps its lines.
func (p *pp) preInclude(header string) {
	p.res.Includes = append(p.res.Includes, header)
	if path, ok := p.findPreInclude(header); ok {
		src, err := readInclude(path)
		if err != nil {
			p.errorf(token.Span{Start: token.NoPos, End: token.NoPos}, "--include %s: %v", header, err)
			return
		}
		q := p.preprocessIncluded(token.NewFile(path, src))
		p.res.Includes = append(p.res.Includes, q.res.Includes...)
		text := flatten(q.out.Bytes())
		seg := segment{out: p.out.Len(), inc: q.res, incLen: len(text)}
		p.out.Write(text)
		p.out.WriteByte(' ') // keeps the file's last token off the script's first
		seg.outEnd = p.out.Len()
		p.res.segs = append(p.res.segs, seg)
		return
	}
	if !knownHeader(header) {
		p.errorf(token.Span{Start: token.NoPos, End: token.NoPos},
			"--include %s: file not found in the working directory or the -I directories, nor a system header gtrace knows", header)
		return
	}
	p.defineHeaderConstants(header)
}

// findPreInclude looks for a --include file as clang does: in the
// working directory, then in the -I directories.
func (p *pp) findPreInclude(header string) (string, bool) {
	if filepath.IsAbs(header) {
		return header, isFile(header)
	}
	for _, dir := range append([]string{"."}, p.opts.IncludeDirs...) {
		if path := filepath.Join(dir, header); isFile(path) {
			return path, true
		}
	}
	return "", false
}
