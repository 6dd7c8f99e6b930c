package cpp

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"gtrace/lang/token"
)

// importStmt reads `import "PATH";`, whose `import` is at sp, and puts
// what it names in its place, as #include puts a header: a bpftrace
// script (.bt), C definitions (.h), or every such file of a directory.
// PATH is relative to the importing file's directory; each file is
// imported once.
func (p *pp) importStmt(sp token.Span) {
	kind, path, name := p.sc.Scan()
	if kind != token.STRING {
		p.errorf(sp, `import expects a path in quotes: import "FILE";`)
		return
	}
	kind, _, semi := p.sc.Scan()
	if kind != token.SEMI {
		p.errorf(semi, "import expects ';' after its path")
		return
	}
	p.blank(int(sp.Start), int(semi.End))
	if !filepath.IsAbs(path) {
		path = filepath.Join(filepath.Dir(p.res.source.Name), path)
	}
	files, err := importFiles(path)
	if err != nil {
		p.errorf(name, "import: %v", err)
		return
	}
	d := directive{at: sp, end: int(semi.End)}
	for _, f := range files {
		if p.imported[f] {
			continue
		}
		p.imported[f] = true
		p.includeFile(d, name, f)
		// The statement's text is in place already: the next file's
		// text follows the first's.
		d = directive{at: token.Span{Start: semi.End, End: semi.End}, end: int(semi.End)}
	}
}

// importFiles lists the files an import of path reads: path itself, or
// the headers then the scripts of the directory path, in name order.
func importFiles(path string) ([]string, error) {
	path, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	dir := filepath.Dir(path)
	var files []string
	if fi.IsDir() {
		dir = path
		entries, err := os.ReadDir(path)
		if err != nil {
			return nil, err
		}
		for _, e := range entries {
			if !e.IsDir() && importable(e.Name()) {
				files = append(files, filepath.Join(path, e.Name()))
			}
		}
		// Headers first: C definitions come before probes and macros.
		slices.SortFunc(files, func(a, b string) int {
			if ha, hb := strings.HasSuffix(a, ".h"), strings.HasSuffix(b, ".h"); ha != hb {
				if ha {
					return -1
				}
				return 1
			}
			return strings.Compare(a, b)
		})
	} else {
		if strings.HasSuffix(path, ".bpf.c") {
			return nil, fmt.Errorf("%s is BPF C, which gtrace cannot compile", path)
		}
		if !importable(path) {
			return nil, fmt.Errorf("%s is neither a bpftrace script (.bt) nor a C header (.h)", path)
		}
		files = []string{path}
	}
	// Anyone could put a file there for the script to run.
	if di, err := os.Stat(dir); err != nil {
		return nil, err
	} else if di.Mode().Perm()&0o002 != 0 {
		return nil, fmt.Errorf("%s is writable by anyone: refusing to import from it", dir)
	}
	return files, nil
}

// importable reports whether an import reads the file name: a bpftrace
// script or a C header.
func importable(name string) bool {
	return strings.HasSuffix(name, ".bt") || strings.HasSuffix(name, ".h")
}
