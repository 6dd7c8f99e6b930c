package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"time"
)

// attachTimeout bounds the wait for the attach notification, as the
// engine's does.
const attachTimeout = 10 * time.Second

// notifyLine is what bpftrace prints once its probes are attached, when
// __BPFTRACE_NOTIFY_PROBES_ATTACHED is set.
const notifyLine = "__BPFTRACE_NOTIFY_PROBES_ATTACHED\n"

// status is how a case ended.
type status string

const (
	passed  status = "pass"
	failed  status = "fail"
	skipped status = "skip"
)

// result is the outcome of one case.
type result struct {
	File     string `json:"file"`
	Name     string `json:"name"`
	Status   status `json:"status"`
	Reason   string `json:"reason,omitempty"`
	Command  string `json:"command,omitempty"`
	Output   string `json:"output,omitempty"`
	NoNotify bool   `json:"no_notify,omitempty"`
	TimedOut bool   `json:"timed_out,omitempty"` // ended by its TIMEOUT
}

// runner runs cases the way bpftrace's test engine does.
type runner struct {
	tracer   string   // the tracer's binary, for {{BPFTRACE}}
	testsDir string   // the working directory of every case
	kernel   string   // this machine's release
	archs    []string // this machine's ARCH identifiers
	// assumeAttached is how long to wait for a tracer that never prints
	// the attach notification before running AFTER anyway; 0 waits for
	// the notification as the engine does.
	assumeAttached time.Duration
}

// skipReason tells why this machine cannot run c, or "".
func (r *runner) skipReason(c *testCase) string {
	switch {
	case !archMatches(c.arch, r.archs):
		return "ARCH " + strings.Join(c.arch, "|")
	case c.minKernel != "" && compareVersions(c.minKernel, r.kernel) > 0:
		return "MIN_KERNEL " + c.minKernel
	case c.maxKernel != "" && compareVersions(c.maxKernel, r.kernel) < 0:
		return "MAX_KERNEL " + c.maxKernel
	case c.skipIfEnv != nil && os.Getenv(c.skipIfEnv[0]) == c.skipIfEnv[1]:
		return "SKIP_IF_ENV_HAS " + strings.Join(c.skipIfEnv, "=")
	}
	for _, req := range c.requires {
		if _, ok := shell(req, r.testsDir, 30*time.Second); !ok {
			return "REQUIRES " + req
		}
	}
	if f := missingProvider(r.probeText(c)); f != "" {
		return "kernel lacks " + f
	}
	for _, f := range c.features {
		if !haveFeature(f) {
			return "kernel lacks " + f
		}
	}
	for _, f := range c.notFeatures {
		if haveFeature(f) {
			return "machine has " + f
		}
	}
	return ""
}

// scriptRe finds the scripts a RUN command gives the tracer.
var scriptRe = regexp.MustCompile(`runtime/scripts/[\w.-]+\.bt`)

// probeText is where c names its probes: its program or command, and the
// scripts the command runs.
func (r *runner) probeText(c *testCase) string {
	text := c.prog + "\n" + c.run
	for _, s := range scriptRe.FindAllString(c.run, -1) {
		if b, err := os.ReadFile(filepath.Join(r.testsDir, s)); err == nil {
			text += "\n" + string(b)
		}
	}
	return text
}

// caseRun is the state of one case while it runs.
type caseRun struct {
	*runner
	c        *testCase
	befores  []*proc
	nsenter  []string
	tracer   *proc
	after    *proc
	output   string
	timedOut bool
	noNotify bool
	notified bool // printed the attach notification
}

// run runs one case and judges it.
func (r *runner) run(c *testCase) result {
	res := result{File: c.file, Name: c.name}
	if why := r.skipReason(c); why != "" {
		res.Status, res.Reason = skipped, why
		return res
	}
	cr := &caseRun{runner: r, c: c}
	res.Status, res.Reason = cr.run()
	res.Command = cr.command()
	res.Output = cr.output
	res.NoNotify = cr.noNotify
	res.TimedOut = cr.timedOut
	return res
}

func (cr *caseRun) run() (status, string) {
	c := cr.c
	if c.newPidNS && len(c.befores) == 0 {
		return failed, "NEW_PIDNS without BEFORE"
	}
	if c.setup != "" {
		if out, ok := shell(c.setup, cr.testsDir, time.Minute); !ok {
			return failed, "SETUP failed: " + firstLine(out)
		}
	}
	err := cr.start()
	cr.stop()
	if c.cleanup != "" {
		if out, ok := shell(c.cleanup, cr.testsDir, time.Minute); !ok {
			return failed, "CLEANUP failed: " + firstLine(out)
		}
	}
	if err != nil {
		return failed, err.Error()
	}
	return cr.judge()
}

// start runs the BEFOREs, the tracer and the AFTER, until the tracer
// exits or the case times out.
func (cr *caseRun) start() error {
	if len(cr.c.befores) > 0 {
		if err := cr.startBefores(); err != nil {
			return err
		}
	}
	call, err := cr.bpfCall()
	if err != nil {
		return err
	}
	env := []string{
		"test=" + cr.c.name,
		"__BPFTRACE_NOTIFY_PROBES_ATTACHED=1",
		"__BPFTRACE_NOTIFY_AOT_PORTABILITY_DISABLED=1",
		"PATH=" + os.Getenv("PATH"),
	}
	for k, v := range cr.c.env {
		env = append(env, k+"="+v)
	}
	if cr.tracer, err = startProc([]string{"/bin/sh", "-c", call}, cr.testsDir, env); err != nil {
		return err
	}
	cr.tracer.reap()
	cr.follow()
	return nil
}

// follow collects the tracer's output until it exits, starts AFTER once
// it has attached, and ends it at the case's timeout.
func (cr *caseRun) follow() {
	deadline := time.NewTimer(attachTimeout)
	defer deadline.Stop()
	var assume <-chan time.Time
	if cr.assumeAttached > 0 {
		assume = time.After(cr.assumeAttached)
	}
	attached := false
	for {
		select {
		case l, ok := <-cr.tracer.lines:
			if !ok {
				<-cr.tracer.exited
				return
			}
			cr.output += l
			if !attached && l == notifyLine {
				attached, assume = true, nil
				cr.attached(deadline, false)
			}
		case <-assume:
			attached = true
			cr.attached(deadline, true)
		case <-cr.tracer.exited:
			cr.collectRest()
			return
		case <-deadline.C:
			cr.timeout()
			return
		}
	}
}

// collectRest reads what the tracer printed before it exited.
func (cr *caseRun) collectRest() {
	t := time.NewTimer(2 * time.Second)
	defer t.Stop()
	for {
		select {
		case l, ok := <-cr.tracer.lines:
			if !ok {
				return
			}
			cr.output += l
		case <-t.C:
			return
		}
	}
}

// attached restarts the clock with the case's TIMEOUT and starts AFTER.
// An exactly compared output starts after the notification.
func (cr *caseRun) attached(deadline *time.Timer, assumed bool) {
	cr.noNotify = assumed
	cr.notified = !assumed
	if cr.c.exact && cr.notified {
		cr.output = ""
	}
	deadline.Reset(time.Duration(cr.c.timeout) * time.Second)
	if cr.c.after == "" {
		return
	}
	argv := []string{"/bin/sh", "-c", cr.c.after}
	if cr.c.newPidNS {
		argv = cr.inPidNS(cr.c.after)
	}
	p, err := startProc(argv, cr.testsDir, nil)
	if err != nil {
		cr.output += "AFTER: " + err.Error() + "\n"
		return
	}
	cr.after = p
}

// attachingLines are the lines a tracer prints before it attaches. From
// a tracer that gave no notification, only they are dropped from an
// exactly compared output, not what begin printed.
var attachingLines = regexp.MustCompile(`(?m)^(Attaching \d+ probes?\.\.\.|\{"type": "attached_probes".*)\n`)

// timeout ends a tracer that outlived its TIMEOUT: SIGTERM first, which
// lets it print its maps, then SIGKILL a second later.
func (cr *caseRun) timeout() {
	cr.timedOut = true
	cr.tracer.signalGroup(syscall.SIGTERM)
	select {
	case <-cr.tracer.exited:
	case <-time.After(time.Second):
		cr.tracer.signalGroup(syscall.SIGKILL)
		<-cr.tracer.exited
	}
	cr.collectRest()
}

// stop ends everything the case started, each given a second to finish.
func (cr *caseRun) stop() {
	for _, b := range cr.befores {
		b.finish(time.Second)
	}
	if cr.tracer != nil {
		cr.tracer.signalGroup(syscall.SIGKILL)
	}
	if cr.after != nil {
		cr.after.finish(time.Second)
	}
}

// startBefores starts the BEFORE commands and waits until each runs.
func (cr *caseRun) startBefores() error {
	if cr.c.newPidNS {
		return cr.startInPidNS()
	}
	var want []string
	for _, b := range cr.c.befores {
		p, err := startProc(strings.Fields(b), cr.testsDir, nil)
		if err != nil {
			return fmt.Errorf("BEFORE: %w", err)
		}
		cr.befores = append(cr.befores, p)
		f := strings.Fields(b)
		want = append(want, commOf(f[len(f)-1]))
	}
	slices.Sort(want)
	ok := waitFor(cr.c.timeout, func() bool {
		var got []string
		for _, p := range cr.befores {
			got = append(got, commName(p.cmd.Process.Pid))
		}
		slices.Sort(got)
		return slices.Equal(got, want)
	})
	if !ok {
		return fmt.Errorf("timed out waiting for BEFORE %s", strings.Join(cr.c.befores, ", "))
	}
	return nil
}

// startInPidNS starts the first BEFORE as the first process of a new pid
// namespace, and the others, the tracer and AFTER inside it.
func (cr *caseRun) startInPidNS() error {
	argv := append([]string{"unshare", "--fork", "--pid", "--mount-proc", "-r", "--kill-child", "--"}, strings.Fields(cr.c.befores[0])...)
	p, err := startProc(argv, cr.testsDir, nil)
	if err != nil {
		return fmt.Errorf("BEFORE: %w", err)
	}
	cr.befores = append(cr.befores, p)
	var child int
	if !waitFor(cr.c.timeout, func() bool {
		kids := childPids(p.cmd.Process.Pid)
		if len(kids) > 0 {
			child = kids[0]
		}
		return child != 0
	}) {
		return fmt.Errorf("timed out creating a pid namespace")
	}
	cr.nsenter = []string{"nsenter", "-p", "-m", "-t", fmt.Sprint(child)}
	for _, b := range cr.c.befores[1:] {
		q, err := startProc(cr.inPidNS(b), cr.testsDir, nil)
		if err != nil {
			return fmt.Errorf("BEFORE: %w", err)
		}
		cr.befores = append(cr.befores, q)
		name := commOf(strings.Fields(b)[0])
		if !waitFor(cr.c.timeout, func() bool {
			for _, k := range childPids(q.cmd.Process.Pid) {
				if commName(k) == name {
					return true
				}
			}
			return false
		}) {
			return fmt.Errorf("timed out waiting for BEFORE %s", b)
		}
	}
	return nil
}

// inPidNS is command run in the case's pid namespace, each word made an
// absolute path as the engine does.
func (cr *caseRun) inPidNS(command string) []string {
	argv := slices.Clone(cr.nsenter)
	for _, w := range strings.Fields(command) {
		abs, err := filepath.Abs(filepath.Join(cr.testsDir, w))
		if err != nil || filepath.IsAbs(w) {
			abs = w
		}
		argv = append(argv, abs)
	}
	return argv
}

// commOf is the process name the kernel keeps for a program path.
func commOf(path string) string {
	name := filepath.Base(path)
	if len(name) > 15 {
		name = name[:15]
	}
	return name
}

// waitFor polls cond every 100ms for up to seconds.
func waitFor(seconds int, cond func() bool) bool {
	end := time.Now().Add(time.Duration(seconds) * time.Second)
	for {
		if cond() {
			return true
		}
		if time.Now().After(end) {
			return false
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// command is the shell command that runs the tracer for the case.
func (cr *caseRun) command() string {
	prefix := ""
	if len(cr.nsenter) > 0 {
		prefix = strings.Join(cr.nsenter, " ") + " "
	}
	if cr.c.run != "" {
		return prefix + strings.ReplaceAll(cr.c.run, "{{BPFTRACE}}", cr.runner.tracer)
	}
	flags := ""
	if len(cr.c.expects) > 0 && cr.c.expects[0].mode == expectJSON {
		flags = " -q -f json"
	}
	prog := strings.ReplaceAll(cr.c.prog, "'", `'\''`)
	return fmt.Sprintf("%s%s%s -e '%s'", prefix, cr.runner.tracer, flags, prog)
}

// bpfCall is command with {{BEFORE_PID}} filled in.
func (cr *caseRun) bpfCall() (string, error) {
	call := cr.command()
	if !strings.Contains(call, "{{BEFORE_PID}}") || len(cr.c.befores) == 0 {
		return call, nil
	}
	if cr.c.newPidNS {
		return "", fmt.Errorf("BEFORE_PID with NEW_PIDNS")
	}
	f := strings.Fields(cr.c.befores[0])
	out, err := exec.Command("pidof", filepath.Base(f[len(f)-1])).Output()
	pids := strings.Fields(string(out))
	if err != nil || len(pids) == 0 {
		return "", fmt.Errorf("no pid for BEFORE %s", cr.c.befores[0])
	}
	return strings.ReplaceAll(call, "{{BEFORE_PID}}", pids[0]), nil
}

// judge decides the case from the exit code and the expectations. A
// case that timed out passes if its expectations are met, whatever its
// exit code.
func (cr *caseRun) judge() (status, string) {
	c := cr.c
	if c.exact && !cr.notified {
		cr.output = attachingLines.ReplaceAllString(cr.output, "")
	}
	var why string
	for _, e := range c.expects {
		if (e.mode == expectFile || e.mode == expectJSON) && !filepath.IsAbs(e.text) {
			e.text = filepath.Join(cr.testsDir, e.text)
		}
		if ok, reason := check(e, cr.output, c.localizeTS); !ok {
			why = reason
			break
		}
	}
	errLine := errorLine(cr.output)
	switch {
	case cr.timedOut && why != "":
		return failed, withError(fmt.Sprintf("timeout (%ds): %s", c.timeout, why), errLine)
	case cr.timedOut:
		return passed, ""
	}
	code := exitCode(cr.tracer.state)
	switch {
	case code != c.returnCode && !c.willFail:
		return failed, withError(fmt.Sprintf("exit code %d, want %d", code, c.returnCode), errLine)
	case code == 0 && c.willFail:
		return failed, "exit code 0, want failure (WILL_FAIL)"
	case why != "":
		return failed, withError(why, errLine)
	}
	return passed, ""
}

// withError puts the tracer's first error first in a reason: it usually
// says more than the expectation it broke.
func withError(why, errLine string) string {
	if errLine == "" {
		return why
	}
	return errLine + " [" + why + "]"
}

// errorLine is the first line of output that reports an error, but for
// the one bpftrace 0.17 prints, and goes on, when it cannot raise
// RLIMIT_MEMLOCK.
func errorLine(output string) string {
	for _, l := range strings.Split(output, "\n") {
		if strings.Contains(l, "ERROR:") && !strings.Contains(l, "RLIMIT_MEMLOCK") {
			return firstLine(strings.TrimSpace(l))
		}
	}
	return ""
}

// compareVersions compares kernel releases by their leading numbers:
// "5.15" < "6.18.44-fc".
func compareVersions(a, b string) int {
	return slices.Compare(versionNumbers(a), versionNumbers(b))
}

var versionRe = regexp.MustCompile(`^\d+(\.\d+)*`)

func versionNumbers(v string) []int {
	var nums []int
	for _, f := range strings.Split(versionRe.FindString(v), ".") {
		var n int
		fmt.Sscan(f, &n)
		nums = append(nums, n)
	}
	return nums
}
