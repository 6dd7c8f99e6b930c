package harness

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// BuildTestdata builds the Go program tests/testdata/NAME, statically
// linked for the guest, and returns its path.
func BuildTestdata(t testing.TB, name string) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), name)
	cmd := exec.Command("go", "build", "-o", bin, "../testdata/"+name)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("building %s: %v\n%s", name, err, out)
	}
	return bin
}

// ShellFuncs are the guest shell functions that print each command's
// output as a section ParseSections reads.
const ShellFuncs = `
# emit NAME STATUS OUT ERR prints a section: the files OUT and ERR and
# the exit status.
emit() {
	printf '@@@@ section %s %s\n' "$1" "$2"
	cat "$3"
	printf '\n@@@@ stderr\n'
	cat "$4"
	printf '\n@@@@ end\n'
}

# section NAME CMD... runs CMD and prints what it did as section NAME.
section() {
	name=$1
	shift
	"$@" >/tmp/out 2>/tmp/err
	emit "$name" $? /tmp/out /tmp/err
}

# wait_for TEST MESSAGE runs the shell test TEST every 0.1 s until it
# holds, for at most 60 s, then says MESSAGE.
wait_for() {
	i=0
	while ! eval "$1"; do
		i=$((i + 1))
		if [ $i -gt 600 ]; then
			echo "$2 after 60 s"
			return 1
		fi
		sleep 0.1
	done
}

# wait_detached waits until no kprobe is registered.
wait_detached() {
	wait_for '[ -z "$(cat $kprobes)" ]' "kprobes still registered"
}

# wait_links PID N waits until process PID holds N BPF links.
wait_links() {
	wait_for "[ \$(grep -l '^link_type:' /proc/$1/fdinfo/* 2>/dev/null | wc -l) -ge $2 ]" "process $1 has not attached $2 links"
}
`

// Section is what one command in the guest did.
type Section struct {
	Stdout, Stderr string
	Status         int
}

// Sections are the sections of a guest script's output, by name.
type Sections map[string]Section

// Get returns the named section and logs it, failing t if there is none
// or its command did not exit with status.
func (ss Sections) Get(t *testing.T, name string, status int) Section {
	t.Helper()
	s, ok := ss[name]
	if !ok {
		t.Fatalf("no section %s in the guest's output", name)
	}
	t.Logf("%s: exit %d\nstdout:\n%s\nstderr:\n%s", name, s.Status, s.Stdout, s.Stderr)
	if s.Status != status {
		t.Fatalf("%s exited %d, want %d", name, s.Status, status)
	}
	return s
}

// ParseSections splits the guest script's output into its sections.
func ParseSections(out string) (Sections, error) {
	sections := Sections{}
	chunks := strings.Split(out, "@@@@ section ")
	for _, chunk := range chunks[1:] {
		header, rest, _ := strings.Cut(chunk, "\n")
		name, status, _ := strings.Cut(header, " ")
		code, err := strconv.Atoi(status)
		stdout, rest, ok1 := strings.Cut(rest, "\n@@@@ stderr\n")
		stderr, _, ok2 := strings.Cut(rest, "\n@@@@ end\n")
		if err != nil || !ok1 || !ok2 {
			return nil, fmt.Errorf("garbled section %q", header)
		}
		sections[name] = Section{Stdout: stdout, Stderr: stderr, Status: code}
	}
	return sections, nil
}

// histLine is a histogram row: its bucket and count.
var histLine = regexp.MustCompile(`^(\[[^\]]*[\])])\s+(\d+) \|@*\s*\|$`)

// Hist returns the rows with a non-zero count of the histogram printed
// under the line head (such as "@ret:"), by bucket; nil if there is none.
func Hist(out, head string) map[string]int {
	_, rest, ok := strings.Cut("\n"+out, "\n"+head+"\n")
	if !ok {
		return nil
	}
	rows := map[string]int{}
	for _, line := range strings.Split(rest, "\n") {
		m := histLine.FindStringSubmatch(line)
		if m == nil {
			break
		}
		if n, _ := strconv.Atoi(m[2]); n > 0 {
			rows[m[1]] = n
		}
	}
	return rows
}

// keyLine is a map entry with a one-part key: "@[vfs_read]: 4".
var keyLine = regexp.MustCompile(`^@\[([^\],]+)\]: (\d+)$`)

// Counts sums the entries of @[key] = count() over every time the map
// is printed, by key.
func Counts(out string) map[string]int {
	counts := map[string]int{}
	for _, line := range strings.Split(out, "\n") {
		if m := keyLine.FindStringSubmatch(line); m != nil {
			n, _ := strconv.Atoi(m[2])
			counts[m[1]] += n
		}
	}
	return counts
}

// StackEntry is a map entry keyed by a kernel stack: its frames, each
// on a line of its own indented by 8 spaces, and its count.
var StackEntry = regexp.MustCompile(`(?m)^@\[\n((?: {8}\S+\n)+)\]: (\d+)$`)

// Lines returns the non-empty lines of s.
func Lines(s string) []string {
	var lines []string
	for _, line := range strings.Split(s, "\n") {
		if line != "" {
			lines = append(lines, line)
		}
	}
	return lines
}

// Attaching returns N of the "Attaching N probes..." line, or -1.
func Attaching(out string) int {
	m := regexp.MustCompile(`(?m)^Attaching (\d+) probes?\.\.\.$`).FindStringSubmatch(out)
	if m == nil {
		return -1
	}
	n, _ := strconv.Atoi(m[1])
	return n
}
