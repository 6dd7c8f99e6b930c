package reliability

import (
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"gtrace/internal/testutils"
	"gtrace/tests/internal/harness"
)

// missingScript has a probe with one missing and one present attach
// point; the present one fires when the -c command exits.
const missingScript = `uprobe:libc:gtrace_no_such_function,
tracepoint:syscalls:sys_enter_exit_group
/pid == cpid/ { printf("fired\n"); exit(); }`

// TestMissingProbes checks missing_probes, from the environment and the
// config block: by default a missing attach point is an error; with
// warn it is dropped with one warning and the rest runs; with ignore it
// is dropped silently. Only attach points that exist are counted.
func TestMissingProbes(t *testing.T) {
	testutils.RequireRoot(t)
	const (
		libc    = "/lib/x86_64-linux-gnu/libc.so.6"
		errWant = "stdin:1:1-36: ERROR: No matches for uprobe " + libc + ":gtrace_no_such_function. " +
			libc + " is stripped: it keeps only its dynamic symbols.\n" +
			"uprobe:libc:gtrace_no_such_function,\n" +
			"~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~\n"
		attached = "Attached 1 probe\n"
		warnWant = "stdin:1:1-36: WARNING: No matches for uprobe " + libc + ":gtrace_no_such_function. Skipping.\n" +
			"uprobe:libc:gtrace_no_such_function,\n" +
			"~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~\n"
	)
	if _, err := os.Stat(libc); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, mode, config string
		code               int
		stdout, stderr     string
	}{
		{"default", "", "", 1, "", errWant},
		{"error", "error", "", 1, "", errWant},
		{"warn", "warn", "", 0, "fired\n", warnWant + attached},
		{"ignore", "ignore", "", 0, "fired\n", attached},
		{"config warn", "", "warn", 0, "fired\n", warnWant + attached},
		// The environment wins over the config block, as in bpftrace.
		{"env over config", "warn", "ignore", 0, "fired\n", warnWant + attached},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			script, want := missingScript, tc.stderr
			if tc.config != "" {
				script = "config = { missing_probes = " + tc.config + " }\n" + script
				want = strings.ReplaceAll(want, "stdin:1:", "stdin:2:")
			}
			cmd := exec.Command(harness.Bin(), "-c", "/bin/true", "-e", script)
			if tc.mode != "" {
				cmd.Env = append(cmd.Environ(), "BPFTRACE_MISSING_PROBES="+tc.mode)
			}
			r := harness.RunCmd(t, cmd, 30*time.Second)
			if r.Code != tc.code || r.Stdout != tc.stdout+mapsAtExit(tc.code) || r.Stderr != want {
				t.Errorf("exit %d, stdout:\n%s\nstderr:\n%s\nwant exit %d, stdout:\n%s\nstderr:\n%s",
					r.Code, r.Stdout, r.Stderr, tc.code, tc.stdout+mapsAtExit(tc.code), want)
			}
		})
	}
}

// mapsAtExit is what a run that exits 0 prints after its output: the
// two empty lines before the (here no) maps.
func mapsAtExit(code int) string {
	if code != 0 {
		return ""
	}
	return "\n\n"
}

// TestSSLToolsMissingWarn runs Debian's ssllatency.bt and sslsnoop.bt
// with missing_probes=warn: the OpenSSL internals Debian's stripped
// libcrypto lacks are dropped with a warning each, the rest attaches
// (as many probes as bpftrace 0.17 attaches) and the tool exits cleanly.
func TestSSLToolsMissingWarn(t *testing.T) {
	testutils.RequireRoot(t)
	for _, tc := range []struct {
		tool     string
		attached string
	}{
		{"ssllatency", "Attached 12 probes\n"},
		{"sslsnoop", "Attached 11 probes\n"},
	} {
		t.Run(tc.tool, func(t *testing.T) {
			cmd := exec.Command(harness.Bin(), "-c", "/bin/sleep 0.5", "/usr/sbin/"+tc.tool+".bt")
			cmd.Env = append(cmd.Environ(), "BPFTRACE_MISSING_PROBES=warn")
			r := harness.RunCmd(t, cmd, 60*time.Second)
			if r.Code != 0 {
				t.Fatalf("exit code %d, stderr:\n%s", r.Code, r.Stderr)
			}
			if !strings.HasPrefix(r.Stdout, "Tracing SSL/TLS handshake... Hit Ctrl-C to end.\n") {
				t.Errorf("stdout does not start with the tool's header:\n%s", r.Stdout)
			}
			if !strings.HasSuffix(r.Stderr, tc.attached) {
				t.Errorf("stderr does not end with %q:\n%s", tc.attached, r.Stderr)
			}
			if strings.Contains(r.Stderr, "ERROR") ||
				!strings.Contains(r.Stderr, "WARNING: No matches for uprobe /lib/x86_64-linux-gnu/libcrypto.so:rsa_ossl_public_encrypt. Skipping.") {
				t.Errorf("want a warning for each missing function and no error, got:\n%s", r.Stderr)
			}
		})
	}
}

// TestUprobeTargetErrors checks that a uprobe that cannot be made names
// its real cause: a file that does not exist, a file that is not ELF, a
// function missing from an unstripped binary (no word of stripping) and
// from a stripped one.
func TestUprobeTargetErrors(t *testing.T) {
	testutils.RequireRoot(t)
	tests := []struct{ probe, want, not string }{
		{"uprobe:/nonexistent/gtrace-bin:f", "ERROR: /nonexistent/gtrace-bin does not exist\n", "ELF"},
		{"uprobe:/etc/passwd:f", "ERROR: /etc/passwd is not an ELF file\n", ""},
		{"uprobe:" + harness.Bin() + ":gtrace_no_such_function",
			"ERROR: No matches for uprobe " + harness.Bin() + ":gtrace_no_such_function.\n", "stripped"},
		{"uprobe:/lib/x86_64-linux-gnu/libc.so.6:gtrace_no_such_function",
			"gtrace_no_such_function. /lib/x86_64-linux-gnu/libc.so.6 is stripped: it keeps only its dynamic symbols.", ""},
	}
	for _, tc := range tests {
		r := harness.Gtrace(t, "-e", tc.probe+" { }")
		if r.Code != 1 || !strings.Contains(r.Stderr, tc.want) || tc.not != "" && strings.Contains(r.Stderr, tc.not) {
			t.Errorf("%s: exit %d, stderr:\n%s\nwant 1 and %q, without %q", tc.probe, r.Code, r.Stderr, tc.want, tc.not)
		}
	}
}

// TestMissingProbesAtAttach checks missing_probes for an attach point
// that passes the checker and fails to attach: a hardware counter on a
// machine without a PMU. With error gtrace stops; with warn it warns and
// runs the rest; with ignore it runs the rest silently.
func TestMissingProbesAtAttach(t *testing.T) {
	testutils.RequireRoot(t)
	if _, err := os.Stat("/sys/bus/event_source/devices/cpu"); err == nil {
		testutils.Skip(t, "this machine has a hardware PMU: its hardware probe attaches")
	}
	script := `hardware:cycles:100000, interval:ms:50 { @ = count(); } interval:ms:200 { exit(); }`
	for _, tt := range []struct {
		mode    string
		code    int
		warning bool
	}{{"error", 1, false}, {"warn", 0, true}, {"ignore", 0, false}} {
		t.Run(tt.mode, func(t *testing.T) {
			r := harness.Gtrace(t, "-e", `config = { missing_probes = "`+tt.mode+`" } `+script)
			if r.Code != tt.code {
				t.Fatalf("exit code %d, want %d\nstderr:\n%s", r.Code, tt.code, r.Stderr)
			}
			if got := strings.Contains(r.Stderr, "WARNING: Unable to attach probe: hardware:cycles:100000. Skipping."); got != tt.warning {
				t.Errorf("warning %v, want %v; stderr:\n%s", got, tt.warning, r.Stderr)
			}
			if tt.code == 0 && !strings.Contains(r.Stdout, "\n@: ") {
				t.Errorf("the interval probe did not run:\n%s", r.Stdout)
			}
			if tt.code != 0 && !strings.Contains(r.Stderr, "ERROR: Unable to attach probe: hardware:cycles:100000.") {
				t.Errorf("no error naming the probe:\n%s", r.Stderr)
			}
		})
	}
}
