package runtime

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"

	"gtrace/internal/testutils"
)

// TestNcpus checks ncpus against the kernel's possible CPUs, which is
// what bpftrace's ncpus counts (util::get_possible_cpus), and that cpu
// is below it, in a program run and in one attached.
func TestNcpus(t *testing.T) {
	testutils.RequireRoot(t)
	want, err := possibleCPUs()
	if err != nil {
		t.Fatal(err)
	}
	for _, src := range []string{
		`BEGIN { printf("%d %d\n", ncpus, cpu < ncpus); exit(); }`,
		`interval:ms:10 { printf("%d %d\n", ncpus, cpu < ncpus); exit(); }`,
	} {
		got, _ := runScript(t, src)
		line, _, _ := strings.Cut(got, "\n")
		if w := fmt.Sprintf("%d 1", want); line != w {
			t.Errorf("%s printed %q, want %q", src, line, w)
		}
	}
}

// possibleCPUs counts the CPUs of /sys/devices/system/cpu/possible, a
// list of ranges such as "0-3,8".
func possibleCPUs() (int, error) {
	b, err := os.ReadFile("/sys/devices/system/cpu/possible")
	if err != nil {
		return 0, err
	}
	n := 0
	for _, r := range strings.Split(strings.TrimSpace(string(b)), ",") {
		lo, hi, ok := strings.Cut(r, "-")
		if !ok {
			hi = lo
		}
		a, err1 := strconv.Atoi(lo)
		z, err2 := strconv.Atoi(hi)
		if err1 != nil || err2 != nil {
			return 0, fmt.Errorf("parse possible cpus %q", b)
		}
		n += z - a + 1
	}
	return n, nil
}
