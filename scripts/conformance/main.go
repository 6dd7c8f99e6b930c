// Command conformance measures how much of current bpftrace gtrace
// speaks: it dry-runs bpftrace's tools and runs bpftrace's runtime test
// cases, as bpftrace's own test engine runs them, with gtrace in place of
// bpftrace. See docs/conformance.md.
package main

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// pinnedCommit is the bpftrace commit whose tests gtrace is measured by.
const pinnedCommit = "e1b7c39341f77374ba8fe8febfa2284896c4941d"

type config struct {
	src, work, run, binary, tracer string
	anyCommit, verbose, asJSON     bool
	tools, runtime                 bool
	assumeAttached                 time.Duration
}

func main() {
	var cfg config
	flag.StringVar(&cfg.src, "src", "", "a bpftrace work tree at the pinned commit (required)")
	flag.BoolVar(&cfg.anyCommit, "any-commit", false, "accept a work tree at another commit")
	flag.StringVar(&cfg.run, "run", "", "run only the runtime cases whose FILE:NAME matches this regex")
	flag.BoolVar(&cfg.verbose, "v", false, "print each failing case's command and output")
	flag.StringVar(&cfg.binary, "gtrace", "", "the tracer binary (default: ./cmd/gtrace built into a temporary directory, or bpftrace from PATH with -tracer bpftrace)")
	flag.StringVar(&cfg.tracer, "tracer", "gtrace", "the tracer under test: gtrace or bpftrace")
	flag.BoolVar(&cfg.asJSON, "json", false, "print the results as JSON")
	flag.StringVar(&cfg.work, "work", filepath.Join(os.TempDir(), "gtrace-conformance"), "the scratch directory for the built test programs")
	flag.BoolVar(&cfg.tools, "tools", true, "dry-run the tools")
	flag.BoolVar(&cfg.runtime, "runtime", true, "run the runtime cases")
	flag.DurationVar(&cfg.assumeAttached, "assume-attached", -1, "for a tracer that prints no attach notification, assume it attached after this long (default 1s for gtrace, off for bpftrace)")
	flag.Parse()
	// Ended early, kill the case that runs: it runs in its own session.
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	go func() {
		<-sigs
		live.killAll()
		os.Exit(1)
	}()
	if err := run(cfg); err != nil {
		fmt.Fprintln(os.Stderr, "conformance:", err)
		os.Exit(1)
	}
}

func run(cfg config) error {
	if cfg.src == "" {
		return errors.New("-src DIR is required: a bpftrace work tree at " + pinnedCommit)
	}
	if err := checkCommit(cfg.src, cfg.anyCommit); err != nil {
		return err
	}
	var filter *regexp.Regexp
	if cfg.run != "" {
		var err error
		if filter, err = regexp.Compile(cfg.run); err != nil {
			return fmt.Errorf("-run: %w", err)
		}
	}
	binary, cleanup, err := tracerBinary(cfg)
	if err != nil {
		return err
	}
	defer cleanup()

	var rep report
	if cfg.tools {
		logf("dry-running tools\n")
		rep.tools = runTools(binary, cfg.src)
	}
	if cfg.runtime {
		if rep.cases, err = runCases(cfg, binary, filter); err != nil {
			return err
		}
	}
	if cfg.asJSON {
		return rep.writeJSON(os.Stdout)
	}
	rep.print(os.Stdout, cfg.verbose)
	return nil
}

// checkCommit refuses a checkout at another commit than the pinned one.
func checkCommit(src string, anyCommit bool) error {
	out, err := exec.Command("git", "-C", src, "rev-parse", "HEAD").Output()
	if err != nil {
		return fmt.Errorf("read the commit of %s: %w", src, err)
	}
	commit := strings.TrimSpace(string(out))
	if commit != pinnedCommit && !anyCommit {
		return fmt.Errorf("%s is at %s, not the pinned %s (use -any-commit to run it anyway)", src, commit, pinnedCommit)
	}
	return nil
}

// tracerBinary finds or builds the tracer; cleanup removes what it built.
func tracerBinary(cfg config) (string, func(), error) {
	nothing := func() {}
	if cfg.binary != "" {
		abs, err := filepath.Abs(cfg.binary)
		return abs, nothing, err
	}
	switch cfg.tracer {
	case "bpftrace":
		path, err := exec.LookPath("bpftrace")
		return path, nothing, err
	case "gtrace":
	default:
		return "", nothing, fmt.Errorf("-tracer %q: want gtrace or bpftrace", cfg.tracer)
	}
	dir, err := os.MkdirTemp("", "conformance-gtrace")
	if err != nil {
		return "", nothing, err
	}
	bin := filepath.Join(dir, "gtrace")
	logf("building ./cmd/gtrace\n")
	if out, err := exec.Command("go", "build", "-o", bin, "./cmd/gtrace").CombinedOutput(); err != nil {
		os.RemoveAll(dir)
		return "", nothing, fmt.Errorf("build ./cmd/gtrace (run from the repository's root): %w\n%s", err, out)
	}
	return bin, func() { os.RemoveAll(dir) }, nil
}

// runCases prepares the tests directory, then runs the selected cases one
// at a time, in the engine's order: by file, then by name.
func runCases(cfg config, binary string, filter *regexp.Regexp) ([]result, error) {
	testsDir, err := prepareTests(cfg)
	if err != nil {
		return nil, err
	}
	cases, err := readCases(filepath.Join(cfg.src, "tests", "runtime"))
	if err != nil {
		return nil, err
	}
	if filter != nil {
		cases = slices.DeleteFunc(cases, func(c testCase) bool { return !filter.MatchString(c.file + ":" + c.name) })
	}
	// Cases that print comm in begin expect the tracer's process name.
	link := filepath.Join(cfg.work, "bin", "bpftrace")
	if err := os.MkdirAll(filepath.Dir(link), 0o755); err != nil {
		return nil, err
	}
	os.Remove(link)
	if err := os.Symlink(binary, link); err != nil {
		return nil, err
	}
	r := &runner{tracer: link, testsDir: testsDir, kernel: kernelRelease(), archs: hostArchs(), assumeAttached: cfg.assumeAttached}
	if r.assumeAttached < 0 {
		r.assumeAttached = 0
		if cfg.tracer == "gtrace" {
			r.assumeAttached = time.Second
		}
	}
	var results []result
	for i := range cases {
		res := r.run(&cases[i])
		how := ""
		if res.TimedOut {
			how = " (timed out)"
		}
		logf("[%d/%d] %s:%s %s%s %s\n", i+1, len(cases), res.File, res.Name, res.Status, how, res.Reason)
		results = append(results, res)
	}
	return results, nil
}

// prepareTests makes the working directory of the cases: like bpftrace's
// build tree, tests/ with runtime/ (the checkout's), and the built
// testprogs/ and testlibs/.
func prepareTests(cfg config) (string, error) {
	work, err := filepath.Abs(filepath.Join(cfg.work, "tests"))
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(work, 0o755); err != nil {
		return "", err
	}
	src, err := filepath.Abs(cfg.src)
	if err != nil {
		return "", err
	}
	link := filepath.Join(work, "runtime")
	os.Remove(link)
	if err := os.Symlink(filepath.Join(src, "tests", "runtime"), link); err != nil {
		return "", err
	}
	logf("building test programs into %s\n", work)
	b := &builder{src: filepath.Join(src, "tests"), out: work, log: logf}
	return work, b.build()
}

// readCases reads every test file under dir, but the engine's own
// directories, as the engine walks it.
func readCases(dir string) ([]testCase, error) {
	var cases []testCase
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path != dir && slices.Contains([]string{"engine", "scripts", "outputs"}, d.Name()) {
				return filepath.SkipDir
			}
			return nil
		}
		if strings.HasPrefix(d.Name(), ".") {
			return nil
		}
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		cs, err := parseCases(d.Name(), f)
		if err != nil {
			return err
		}
		cases = append(cases, cs...)
		return nil
	})
	slices.SortStableFunc(cases, func(a, b testCase) int {
		return strings.Compare(a.file+"\x00"+a.name, b.file+"\x00"+b.name)
	})
	return cases, err
}

func kernelRelease() string {
	var u unix.Utsname
	if err := unix.Uname(&u); err != nil {
		return ""
	}
	return unix.ByteSliceToString(u.Release[:])
}

// hostArchs are the identifiers ARCH matches: the machine's name, as
// uname gives it, and its byte order.
func hostArchs() []string {
	var u unix.Utsname
	unix.Uname(&u)
	b := make([]byte, 2)
	binary.NativeEndian.PutUint16(b, 1)
	order := "le"
	if b[0] == 0 {
		order = "be"
	}
	return []string{strings.ToLower(unix.ByteSliceToString(u.Machine[:])), order}
}

// logf reports progress on stderr.
func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, format, args...)
}

// writeJSON prints the results as one JSON document.
func (rep *report) writeJSON(w *os.File) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(map[string][]result{"tools": rep.tools, "cases": rep.cases})
}
