package symbol

import (
	"bytes"
	"debug/elf"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/ianlancetaylor/demangle"
)

// libraryDirs are searched for a library named without a path, as the
// dynamic loader's default paths and Debian's multiarch directories.
var libraryDirs = []string{
	"/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu",
	"/lib64", "/usr/lib64", "/lib", "/usr/lib",
	"/usr/local/lib", "/usr/local/lib/x86_64-linux-gnu",
}

// ResolveBinary turns a uprobe target as written into the path of an
// ELF file: a path is used as it is, a name with no '/' such as "libc"
// or "libc.so.6" is looked up as a library in the loader's directories,
// then as a program in PATH.
func ResolveBinary(target string) (string, error) {
	if strings.Contains(target, "/") {
		if _, err := os.Stat(target); errors.Is(err, fs.ErrNotExist) {
			return "", fmt.Errorf("%s does not exist", target)
		} else if err != nil {
			return "", err
		}
		if !IsELF(target) {
			return "", fmt.Errorf("%s is not an ELF file", target)
		}
		return target, nil
	}
	for _, dir := range libraryDirs {
		for _, pattern := range []string{target, target + ".so", target + ".so.*", target + "-*.so"} {
			matches, _ := filepath.Glob(filepath.Join(dir, pattern))
			sort.Strings(matches)
			for _, m := range matches {
				if IsELF(m) {
					return m, nil
				}
			}
		}
	}
	for _, dir := range filepath.SplitList(os.Getenv("PATH")) {
		if p := filepath.Join(dir, target); IsELF(p) {
			return p, nil
		}
	}
	return "", fmt.Errorf("could not find %s: not a path, a library in %s, nor a program in PATH",
		target, strings.Join(libraryDirs, ", "))
}

// IsELF reports whether path is a readable ELF file; Debian's libc.so is
// a linker script, not the library.
func IsELF(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	magic := make([]byte, 4)
	_, err = f.Read(magic)
	return err == nil && bytes.Equal(magic, []byte(elf.ELFMAG))
}

// Functions lists the function symbols of an ELF file, from .symtab and
// .dynsym, without duplicates, sorted.
func Functions(path string) ([]string, error) {
	f, err := elf.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	seen := map[string]bool{}
	var out []string
	add := func(syms []elf.Symbol) {
		for _, s := range syms {
			if elf.ST_TYPE(s.Info) != elf.STT_FUNC || s.Value == 0 || s.Name == "" {
				continue
			}
			// Versioned dynamic names ("read@@GLIBC_2.2.5") trace as "read".
			name, _, _ := strings.Cut(s.Name, "@")
			if !seen[name] {
				seen[name] = true
				out = append(out, name)
			}
		}
	}
	if syms, err := f.Symbols(); err == nil {
		add(syms)
	}
	if syms, err := f.DynamicSymbols(); err == nil {
		add(syms)
	}
	sort.Strings(out)
	return out, nil
}

// HasSymbols reports whether an ELF file has a .symtab, which stripped
// binaries lack.
func HasSymbols(path string) bool {
	f, err := elf.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	return f.Section(".symtab") != nil
}

// CppFunction is a C++ function symbol of an ELF file: its mangled name,
// which uprobes attach to, and its demangled name without parameters.
type CppFunction struct {
	Mangled, Name string
}

// CppFunctions lists the C++ functions of an ELF file, demangled.
func CppFunctions(path string) ([]CppFunction, error) {
	names, err := Functions(path)
	if err != nil {
		return nil, err
	}
	var out []CppFunction
	for _, n := range names {
		if !strings.HasPrefix(n, "_Z") {
			continue
		}
		if d, err := demangle.ToString(n, demangle.NoParams); err == nil {
			out = append(out, CppFunction{Mangled: n, Name: d})
		}
	}
	return out, nil
}

// FileOffset turns a virtual address of an ELF file into the offset in
// the file that holds it, which is what the kernel attaches uprobes at.
func FileOffset(path string, addr uint64) (uint64, error) {
	f, err := elf.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	return vaddrToOffset(f, addr)
}

// Stub reports whether an ELF library defines no functions of its own,
// as glibc 2.34's libpthread.so.0, whose functions moved into libc. A
// program, stripped or not, is never a stub.
func Stub(path string) bool {
	f, err := elf.Open(path)
	if err != nil {
		return false
	}
	isLib := f.Type == elf.ET_DYN
	for _, p := range f.Progs {
		isLib = isLib && p.Type != elf.PT_INTERP // PIE programs have one
	}
	f.Close()
	if !isLib {
		return false
	}
	names, err := Functions(path)
	if err != nil {
		return false
	}
	for _, n := range names {
		if !strings.HasPrefix(n, "_") {
			return false
		}
	}
	return true
}
