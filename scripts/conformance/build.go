package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
)

// testprogFlags are the flags bpftrace's build gives every test program:
// debug info, no optimisation, frame pointers for stack walking.
var testprogFlags = []string{"-g", "-O0", "-fno-omit-frame-pointer", "-mno-omit-leaf-frame-pointer"}

// nofpFlags replace them for uprobe_nofp, which tests DWARF unwinding.
var nofpFlags = []string{"-g", "-O1", "-fomit-frame-pointer", "-fno-optimize-sibling-calls"}

// builder builds bpftrace's test programs and libraries the way its
// CMake files do, into out (which mirrors the build tree's tests/).
type builder struct {
	src string // bpftrace's tests/ directory
	out string
	log func(format string, args ...any)
}

// step is one build command and the files it makes.
type step struct {
	outputs []string
	argv    [][]string
}

// build runs the steps whose outputs are missing; a step that fails is
// reported and its programs' cases fail when they run.
func (b *builder) build() error {
	progs, libs := filepath.Join(b.out, "testprogs"), filepath.Join(b.out, "testlibs")
	for _, d := range []string{progs, libs, filepath.Join(progs, "external_debug", "dwo"), filepath.Join(progs, "external_debug", "dwp"), filepath.Join(progs, ".debug")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
	}
	libSteps, err := b.libSteps(libs)
	if err != nil {
		return err
	}
	b.runSteps(libSteps)
	progSteps, err := b.progSteps(progs, libs)
	if err != nil {
		return err
	}
	b.runSteps(progSteps)
	b.runSteps(b.derivedSteps(progs))
	return nil
}

// libSteps build each tests/testlibs source as a shared library without
// the executable bit, so that tracing a non-executable object is tested.
func (b *builder) libSteps(libs string) ([]step, error) {
	srcs, err := sources(filepath.Join(b.src, "testlibs"))
	if err != nil {
		return nil, err
	}
	var steps []step
	for _, s := range srcs {
		lib := filepath.Join(libs, "lib"+baseName(s)+".so")
		argv := []string{compiler(s), "-shared", "-fPIC", "-g", "-O0", "-I", filepath.Join(b.src, "include"), "-o", lib, s}
		steps = append(steps, step{[]string{lib}, [][]string{argv, {"chmod", "-x", lib}}})
	}
	return steps, nil
}

// progSteps build each tests/testprogs source twice, without and with PIE.
func (b *builder) progSteps(progs, libs string) ([]step, error) {
	srcs, err := sources(filepath.Join(b.src, "testprogs"))
	if err != nil {
		return nil, err
	}
	var steps []step
	for _, s := range srcs {
		for _, pie := range []bool{false, true} {
			name, cflags, ldflags := baseName(s), []string{}, []string{"-no-pie"}
			if pie {
				name, cflags, ldflags = name+"-pie", []string{"-fpie"}, []string{"-pie"}
			}
			flags := append(append([]string{}, testprogFlags...), cflags...)
			if baseName(s) == "uprobe_nofp" {
				flags = nofpFlags
			}
			out := filepath.Join(progs, name)
			argv := []string{compiler(s)}
			argv = append(argv, flags...)
			argv = append(argv, "-I", filepath.Join(b.src, "include"), "-o", out, s)
			argv = append(argv, ldflags...)
			if baseName(s) == "usdt_lib" {
				argv = append(argv, "-fPIC", "-I", filepath.Join(b.src, "testlibs"),
					"-L", libs, "-lusdt_tp", "-Wl,-rpath,"+libs)
			}
			steps = append(steps, step{[]string{out}, [][]string{argv}})
		}
	}
	for _, g := range globs(filepath.Join(b.src, "testprogs", "*.go")) {
		out := filepath.Join(progs, baseName(g))
		steps = append(steps, step{[]string{out}, [][]string{{"go", "build", "-o", out, g}}})
	}
	for _, r := range globs(filepath.Join(b.src, "testprogs", "*.rs")) {
		out := filepath.Join(progs, baseName(r))
		steps = append(steps, step{[]string{out}, [][]string{{"rustc", "-C", "symbol_mangling_version=v0", "-o", out, r}}})
	}
	return steps, nil
}

// derivedSteps make the files that CMake derives from the programs: a
// flat binary, a zip archive, stripped binaries with separate debug info,
// split DWARF and a DWARF package.
func (b *builder) derivedSteps(progs string) []step {
	src := filepath.Join(b.src, "testprogs")
	ext := filepath.Join(progs, "external_debug")
	obj := filepath.Join(progs, "false.o")
	stripped := filepath.Join(progs, "uprobe_test-stripped")
	sepDebug := filepath.Join(progs, ".debug", "uprobe_separate_debug-stripped.debug")
	sepStripped := filepath.Join(progs, "uprobe_separate_debug-stripped")
	dwp := filepath.Join(ext, "dwp", "uprobe_test-split")
	return []step{
		{[]string{filepath.Join(progs, "false.bin")}, [][]string{
			{"cc", "-c", filepath.Join(src, "false.c"), "-o", obj},
			{"llvm-objcopy", "-S", "--only-section=.text", "--keep-symbol=main", "-O", "binary", obj, filepath.Join(progs, "false.bin")},
			{"rm", "-f", obj},
		}},
		{[]string{filepath.Join(progs, "archive.zip")}, [][]string{
			{"zip", "-q", "-0", "-j", filepath.Join(progs, "archive.zip"), filepath.Join(progs, "true")},
		}},
		{[]string{stripped}, [][]string{
			{"llvm-objcopy", "--only-keep-debug", filepath.Join(progs, "uprobe_test"), filepath.Join(ext, "uprobe_test-stripped.debug")},
			{"llvm-objcopy", "--strip-debug", filepath.Join(progs, "uprobe_test"), stripped},
		}},
		{[]string{sepStripped}, [][]string{
			{"llvm-objcopy", "--only-keep-debug", filepath.Join(progs, "uprobe_separate_debug"), sepDebug},
			{"llvm-objcopy", "--strip-debug", filepath.Join(progs, "uprobe_separate_debug"), sepStripped},
			{"llvm-objcopy", "--add-gnu-debuglink=" + sepDebug, sepStripped},
		}},
		{[]string{filepath.Join(ext, "dwo", "uprobe_test-split")}, [][]string{
			{"cc", "-g", "-O0", "-gsplit-dwarf", filepath.Join(src, "uprobe_test.c"), "-o", filepath.Join(ext, "dwo", "uprobe_test-split")},
		}},
		{[]string{dwp}, [][]string{
			{"cc", "-g", "-O0", "-gsplit-dwarf", filepath.Join(src, "uprobe_test.c"), "-o", dwp},
			{"llvm-dwp", "-e", dwp, "-o", dwp + ".dwp"},
			{"sh", "-c", "rm -f " + filepath.Join(ext, "dwp") + "/*.dwo"},
		}},
	}
}

// runSteps runs the steps that are not done yet, two at a time.
func (b *builder) runSteps(steps []step) {
	var wg sync.WaitGroup
	sem := make(chan struct{}, 2)
	for _, s := range steps {
		if done(s.outputs) {
			continue
		}
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			if err := s.run(); err != nil {
				b.log("build %s: %v\n", filepath.Base(s.outputs[0]), err)
			}
		}()
	}
	wg.Wait()
}

// run runs the commands of one step in the directory of its first output,
// where the split DWARF steps leave their .dwo files.
func (s step) run() error {
	for _, argv := range s.argv {
		cmd := exec.Command(argv[0], argv[1:]...)
		cmd.Dir = filepath.Dir(s.outputs[0])
		if out, err := cmd.CombinedOutput(); err != nil {
			for _, o := range s.outputs {
				os.Remove(o)
			}
			return fmt.Errorf("%s: %w: %s", strings.Join(argv, " "), err, firstLine(string(out)))
		}
	}
	return nil
}

func done(outputs []string) bool {
	for _, o := range outputs {
		if _, err := os.Stat(o); err != nil {
			return false
		}
	}
	return true
}

// sources are the C and C++ files of dir.
func sources(dir string) ([]string, error) {
	c := globs(filepath.Join(dir, "*.c"))
	cpp := globs(filepath.Join(dir, "*.cpp"))
	if len(c)+len(cpp) == 0 {
		return nil, fmt.Errorf("no sources in %s", dir)
	}
	return append(c, cpp...), nil
}

func globs(pattern string) []string {
	m, _ := filepath.Glob(pattern)
	return m
}

func baseName(path string) string {
	return strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
}

// compiler is cc for C, c++ for C++.
func compiler(src string) string {
	if filepath.Ext(src) == ".cpp" {
		return "c++"
	}
	return "cc"
}
