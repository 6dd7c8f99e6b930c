package probe

import (
	"os"
	"path/filepath"
	"strings"

	"gtrace/kernel"
	"gtrace/symbol"
)

// binaries resolves the binary of a uprobe or usdt attach point into
// the files to attach to. A path may have wildcards; a name without '/'
// is looked up as a library or a program (symbol.ResolveBinary). With
// -p, an empty or "*" binary stands for every file the process maps,
// and an absolute path is the process's, through /proc/PID/root when it
// is in another mount namespace. With --unsafe, a path may name a file
// that is not ELF, such as a JIT's code.
func (env *Env) binaries(target string) ([]string, error) {
	root := ""
	if env.Pid != 0 {
		if target == "" || target == "*" {
			return env.mappedBinaries()
		}
		if filepath.IsAbs(target) {
			root = symbol.ProcessRoot(env.Pid)
		}
	}
	if kernel.HasWildcard(target) {
		return symbol.GlobBinaries(root + target)
	}
	path := root + target
	if env.Unsafe && strings.Contains(path, "/") {
		if st, err := os.Stat(path); err == nil && st.Mode().IsRegular() {
			return []string{path}, nil
		}
	}
	path, err := symbol.ResolveBinary(path)
	if err != nil {
		return nil, err
	}
	return []string{path}, nil
}

// mappedBinaries lists the ELF files that the -p process maps
// executable, as gtrace sees them.
func (env *Env) mappedBinaries() ([]string, error) {
	files, err := symbol.MappedFiles(env.Pid)
	if err != nil {
		return nil, err
	}
	root := symbol.ProcessRoot(env.Pid)
	var out []string
	for _, f := range files {
		if symbol.IsELF(root + f) {
			out = append(out, root+f)
		}
	}
	return out, nil
}
