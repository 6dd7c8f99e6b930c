package tools

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"gtrace/internal/testutils"
	"gtrace/tests/internal/harness"
)

// bashPty drives an interactive bash on a pseudo-terminal, so that it
// reads its commands with readline.
const bashPty = `
import os, pty, time
pid, fd = pty.fork()
if pid == 0:
    os.execv("/bin/bash", ["bash", "--norc", "--noprofile", "-i"])
time.sleep(0.5)
os.write(fd, b"echo gtrace-marker-one\n")
time.sleep(0.3)
os.write(fd, b"true gtrace-marker-two\n")
time.sleep(0.3)
os.write(fd, b"exit\n")
try:
    while os.read(fd, 1024): pass
except OSError:
    pass
os.waitpid(pid, 0)
`

// TestBashreadline runs Debian's bashreadline.bt unmodified on an
// interactive bash: the commands typed must show up.
func TestBashreadline(t *testing.T) {
	testutils.RequireRoot(t)
	script := filepath.Join(t.TempDir(), "drive_bash.py") // not pty.py: it would shadow the module
	if err := os.WriteFile(script, []byte(bashPty), 0o644); err != nil {
		t.Fatal(err)
	}
	r := harness.Gtrace(t, "-c", "/usr/bin/python3 "+script, "/usr/sbin/bashreadline.bt")
	if r.Code != 0 {
		t.Fatalf("exit code %d, stderr:\n%s", r.Code, r.Stderr)
	}
	for _, cmd := range []string{"echo gtrace-marker-one", "true gtrace-marker-two", "exit"} {
		line := regexp.MustCompile(`(?m)^\d\d:\d\d:\d\d  \d+ +` + regexp.QuoteMeta(cmd) + `$`)
		if !line.MatchString(r.Stdout) {
			t.Errorf("no line for %q in:\n%s\nstderr:\n%s", cmd, r.Stdout, r.Stderr)
		}
	}
}

// TestGethostlatency runs Debian's gethostlatency.bt unmodified on getent
// lookups, under both tracers: the same hosts and commands, in the same
// order.
func TestGethostlatency(t *testing.T) {
	testutils.RequireRoot(t)
	bpftrace := harness.RequireBpftrace(t)
	work := "/bin/sh " + harness.WriteScript(t, "lookups.sh",
		"getent ahosts localhost > /dev/null\ngetent hosts gtrace-nonexistent.invalid > /dev/null\nexit 0\n")
	// TIME, PID and LATms vary from run to run; COMM and HOST do not.
	row := regexp.MustCompile(`(?m)^\d\d:\d\d:\d\d  \d+ +(\S+) +\d+ (\S+)$`)
	rows := func(out string) []string {
		var got []string
		for _, m := range row.FindAllStringSubmatch(out, -1) {
			got = append(got, m[1]+" "+m[2])
		}
		return got
	}
	want := harness.Run(t, bpftrace, "-c", work, "/usr/sbin/gethostlatency.bt")
	got := harness.Gtrace(t, "-c", work, "/usr/sbin/gethostlatency.bt")
	if got.Code != 0 || want.Code != 0 {
		t.Fatalf("exit codes: gtrace %d, bpftrace %d; gtrace stderr:\n%s", got.Code, want.Code, got.Stderr)
	}
	w, g := rows(want.Stdout), rows(got.Stdout)
	if len(g) == 0 || !strings.Contains(strings.Join(g, "\n"), "getent localhost") ||
		!strings.Contains(strings.Join(g, "\n"), "getent gtrace-nonexistent.invalid") {
		t.Errorf("the lookups are missing:\n%s", got.Stdout)
	}
	if strings.Join(w, "\n") != strings.Join(g, "\n") {
		t.Errorf("bpftrace:\n%s\ngtrace:\n%s", want.Stdout, got.Stdout)
	}
}

// threadsProgram starts a known number of threads.
const threadsProgram = `
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>
static void *work(void *arg) { return arg; }
int main(void) {
	usleep(200000);
	pthread_t t[5];
	for (int i = 0; i < 5; i++) pthread_create(&t[i], NULL, work, NULL);
	for (int i = 0; i < 5; i++) pthread_join(t[i], NULL);
	printf("created 5\n");
	usleep(200000);
	return 0;
}
`

// TestThreadsnoop runs Debian's threadsnoop.bt, which probes
// libpthread:pthread_create: glibc 2.34 moved that function into libc,
// so, as under bpftrace 0.17, it sees no events. A copy adapted to libc
// sees every thread the program creates.
func TestThreadsnoop(t *testing.T) {
	testutils.RequireRoot(t)
	bin := harness.BuildC(t, "threads", map[string]string{"threads.c": threadsProgram}, "-pthread")
	r := harness.Gtrace(t, "-c", bin, "/usr/sbin/threadsnoop.bt")
	if r.Code != 0 {
		t.Fatalf("exit code %d, stderr:\n%s", r.Code, r.Stderr)
	}
	if got := strings.Count(r.Stdout, " threads "); got != 0 {
		t.Errorf("%d events from libpthread, want none:\n%s", got, r.Stdout)
	}
	if !strings.Contains(r.Stderr, "libpthread.so.0 defines no functions") {
		t.Errorf("no warning about the stub library:\n%s", r.Stderr)
	}

	src, err := os.ReadFile("/usr/sbin/threadsnoop.bt")
	if err != nil {
		t.Fatal(err)
	}
	adapted := filepath.Join(t.TempDir(), "threadsnoop.bt")
	if err := os.WriteFile(adapted, []byte(strings.ReplaceAll(string(src), "uprobe:libpthread:", "uprobe:libc:")), 0o644); err != nil {
		t.Fatal(err)
	}
	r = harness.Gtrace(t, "-c", bin, adapted)
	if r.Code != 0 {
		t.Fatalf("exit code %d, stderr:\n%s", r.Code, r.Stderr)
	}
	events := regexp.MustCompile(`(?m)^\d+ +\d+ +threads +work$`).FindAllString(r.Stdout, -1)
	if len(events) != 5 {
		t.Errorf("%d thread events, want 5:\n%s", len(events), r.Stdout)
	}
}

// TestSSLTools runs Debian's ssllatency.bt and sslsnoop.bt, which probe
// OpenSSL internals that Debian's stripped libcrypto does not export:
// each must fail with an error naming the missing symbol.
func TestSSLTools(t *testing.T) {
	testutils.RequireRoot(t)
	for _, tool := range []string{"ssllatency", "sslsnoop"} {
		r := harness.Gtrace(t, "--dry-run", "/usr/sbin/"+tool+".bt")
		if r.Code != 1 || !strings.Contains(r.Stderr, ":rsa_ossl_public_encrypt. ") {
			t.Errorf("%s: exit code %d, want 1 and the missing symbol named:\n%s", tool, r.Code, r.Stderr)
		}
	}
}
