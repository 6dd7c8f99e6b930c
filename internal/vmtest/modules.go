package vmtest

import (
	"debug/elf"
	"fmt"
	"io/fs"
	"path"
	"path/filepath"
	"strings"
)

// moduleFiles finds the modules named in names (see Config.Modules) in
// the kernel package unpacked at dir. It returns the files to put in the
// initramfs (guest path to host path) and their guest paths in load
// order, under /lib/modules: NAME.ko, or NAME.ko.xz for a compressed
// module, which the init script decompresses with busybox's xzcat.
func moduleFiles(dir string, names []string) (files map[string]string, guest []string, err error) {
	if len(names) == 0 {
		return nil, nil, nil
	}
	found := map[string]string{} // normalised name to host path
	roots, _ := filepath.Glob(filepath.Join(dir, "lib", "modules", "*", "kernel"))
	for _, root := range roots {
		err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			if name, ok := moduleName(d.Name()); ok {
				found[name] = p
			}
			return nil
		})
		if err != nil {
			return nil, nil, err
		}
	}

	files = map[string]string{}
	loaded := map[string]bool{}
	for _, name := range names {
		norm := strings.ReplaceAll(name, "-", "_")
		host, ok := found[norm]
		if !ok {
			return nil, nil, fmt.Errorf("module %q: not a loadable module of %s (built in, or absent)", name, dir)
		}
		if loaded[norm] {
			return nil, nil, fmt.Errorf("module %q listed twice", name)
		}
		deps, err := moduleDepends(host)
		if err != nil {
			return nil, nil, err
		}
		for _, dep := range deps {
			if !loaded[strings.ReplaceAll(dep, "-", "_")] {
				return nil, nil, fmt.Errorf("module %q depends on %q: list it first", name, dep)
			}
		}
		loaded[norm] = true
		g := "/lib/modules/" + norm + ".ko"
		if strings.HasSuffix(host, ".xz") {
			g += ".xz"
		}
		files[g] = host
		guest = append(guest, g)
	}
	return files, guest, nil
}

// moduleName returns the module name of a file name such as
// "nls_cp437.ko" or "dm-mod.ko.xz", with '-' turned into '_' as the
// kernel does.
func moduleName(file string) (string, bool) {
	base, ok := strings.CutSuffix(strings.TrimSuffix(file, ".xz"), ".ko")
	return strings.ReplaceAll(base, "-", "_"), ok
}

// moduleDepends returns the modules an uncompressed module depends on,
// from the depends= field of its .modinfo section. Compressed modules
// cannot be read here (the standard library has no xz), so their
// dependencies go unchecked: insmod reports unknown symbols.
func moduleDepends(host string) ([]string, error) {
	if strings.HasSuffix(host, ".xz") {
		return nil, nil
	}
	f, err := elf.Open(host)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	sec := f.Section(".modinfo")
	if sec == nil {
		return nil, fmt.Errorf("%s: no .modinfo section", host)
	}
	data, err := sec.Data()
	if err != nil {
		return nil, err
	}
	for _, field := range strings.Split(string(data), "\x00") {
		if v, ok := strings.CutPrefix(field, "depends="); ok && v != "" {
			return strings.Split(v, ","), nil
		}
	}
	return nil, nil
}

// insmodScript is the part of the init script that loads the modules at
// the guest paths in order. A failure skips the command: its stderr says
// which module failed and why, and its exit status is 125.
func insmodScript(guest []string) string {
	if len(guest) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("modules_loaded() {\n")
	for _, g := range guest {
		ko := g
		if strings.HasSuffix(g, ".xz") {
			ko = "/run/" + strings.TrimSuffix(path.Base(g), ".xz")
			fmt.Fprintf(&b, "\txzcat %s >%s || { echo 'vmtest: xzcat %s failed'; return 1; }\n", shellQuote(g), shellQuote(ko), g)
		}
		fmt.Fprintf(&b, "\tinsmod %s || { echo 'vmtest: insmod %s failed'; return 1; }\n", shellQuote(ko), ko)
	}
	b.WriteString("}\n")
	return b.String()
}
