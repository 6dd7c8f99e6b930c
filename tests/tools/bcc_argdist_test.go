package tools

import (
	"maps"
	"regexp"
	"strings"
	"testing"

	"gtrace/internal/testutils"
	"gtrace/tests/internal/harness"
)

// argsProgram writes 3 times 10 bytes, 5 times 100 and twice 1000 to
// /dev/null, then says done in 5 bytes; it calls take(1) twice and
// take(7) three times, which return 2 and 14.
const argsProgram = `
#include <fcntl.h>
#include <unistd.h>
char buf[1000];
__attribute__((noinline)) int take(int n) { return 2 * n; }
int main(void) {
	char c;
	if (read(0, &c, 1) < 0) return 1;
	int fd = open("/dev/null", O_WRONLY);
	for (int i = 0; i < 3; i++) write(fd, buf, 10);
	for (int i = 0; i < 5; i++) write(fd, buf, 100);
	for (int i = 0; i < 2; i++) write(fd, buf, 1000);
	for (int i = 0; i < 2; i++) take(1);
	for (int i = 0; i < 3; i++) take(7);
	write(1, "done\n", 5);
	return read(0, &c, 1);
}
`

// The lines of a count and of a histogram's bucket, as gtrace and
// bpftrace print them.
var (
	countLine  = regexp.MustCompile(`(?m)^@counts\[(.+)\]: (\d+)$`)
	bucketLine = regexp.MustCompile(`(?m)^(\[[^\])]*[\])])\s+(\d+) \|`)
)

// matches reads the lines re matches as a map of their two submatches,
// but the buckets of no calls.
func matches(re *regexp.Regexp, out string) map[string]string {
	got := map[string]string{}
	for _, m := range re.FindAllStringSubmatch(out, -1) {
		if m[2] != "0" {
			got[m[1]] = m[2]
		}
	}
	return got
}

// TestArgdist runs argdist on one run of argsProgram for each kind of
// specifier: exactly the sizes it writes and the arguments and returns
// of take(), counted or in a histogram. Where bpftrace can say the
// same, it traces the run at the same time and must print the same.
func TestArgdist(t *testing.T) {
	testutils.RequireRoot(t)
	bpftrace := harness.RequireBpftrace(t)
	bin := buildProgram(t, "args", argsProgram)
	sizes := map[string]string{"[4, 8)": "1", "[8, 16)": "3", "[64, 128)": "5", "[512, 1K)": "2"}
	tests := []struct {
		name string
		args []string
		// pid says the specifier filters by the program's pid, for
		// which the test writes its place, and -p is left out.
		pid  bool
		re   *regexp.Regexp
		want map[string]string
		// ref is bpftrace's attach point and action, "" for none.
		ref string
	}{
		{"hist-write", []string{"-H", "p:c:write(int fd, const void *buf, size_t count):size_t:count"}, false, bucketLine, sizes,
			"uprobe:libc:write { @h = hist(arg2); }"},
		{"count-take", []string{"-C", "p:" + bin + ":take(int n):int:n"}, false, countLine, map[string]string{"1": "2", "7": "3"},
			"uprobe:" + bin + ":take { @counts[(int32)arg0] = count(); }"},
		{"count-return", []string{"-C", "r:" + bin + ":take():int:$retval"}, false, countLine, map[string]string{"2": "2", "14": "3"},
			"uretprobe:" + bin + ":take { @counts[(int32)retval] = count(); }"},
		{"count-two", []string{"-C", "p:" + bin + ":take(int n):int,int:n,n*3:n>1"}, false, countLine, map[string]string{"7, 21": "3"}, ""},
		{"tracepoint-filter", []string{"-H", "t:syscalls:sys_enter_write():size_t:args->count:pid==PID"}, true, bucketLine, sizes, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			prog := startGated(t, bin)
			var ref *tracer
			if tt.ref != "" {
				attach, action, _ := strings.Cut(tt.ref, " ")
				ref = startTracer(t, 0, bpftrace, "-q", "-e", `BEGIN { printf("ready\n"); } `+attach+` /pid == `+prog.pid()+`/ `+action)
			}
			args := append([]string{"tools", "argdist", "-i", "100"}, tt.args...)
			if tt.pid {
				last := len(args) - 1
				args[last] = strings.ReplaceAll(args[last], "PID", prog.pid())
			} else {
				args = append(args, "-p", prog.pid())
			}
			tr := startTracer(t, 0, harness.Bin(), args...)
			prog.run(t)
			out := tr.stop(t)
			if got := matches(tt.re, out); !maps.Equal(got, tt.want) {
				t.Errorf("%q: got %v, want %v; output:\n%s", tt.args, got, tt.want, out)
			}
			if ref == nil {
				return
			}
			refOut := ref.stop(t)
			if got := matches(tt.re, refOut); !maps.Equal(got, tt.want) {
				t.Errorf("bpftrace %s: got %v, want %v; output:\n%s", tt.ref, got, tt.want, refOut)
			}
		})
	}
}
