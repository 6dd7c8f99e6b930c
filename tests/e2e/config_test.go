package e2e

import (
	"strings"
	"testing"

	"gtrace/internal/testutils"
	"gtrace/tests/internal/harness"
)

// TestProgramArguments runs scripts with positional parameters and
// program options after --, and config settings, through the binary.
func TestProgramArguments(t *testing.T) {
	testutils.RequireRoot(t)
	tests := []struct {
		name   string
		args   []string
		code   int
		stdout string // a line printed
		stderr string // what stderr holds
	}{
		{"named and positional", []string{"-e", `BEGIN { print(($1, getopt("aa", 10), getopt("bb", -1), $2, getopt("cc", "hello"), getopt("dd"))); exit() }`,
			"pos1", "--", "--aa=20", "--bb=5", "--cc=bye", "pos2", "--dd"}, 0, "(pos1, 20, 5, pos2, bye, true)", ""},
		{"defaults", []string{"-e", `BEGIN { print((getopt("aa", 0xffffffffffffffff), getopt("cc", true), getopt("dd"))); exit() }`, "--", "--cc=False"},
			0, "(18446744073709551615, false, false)", ""},
		{"wrong type", []string{"-e", `BEGIN { print(getopt("aa", 10)); }`, "--", "--aa=False"},
			1, "", "ERROR: program command line option --aa invalid integer (value: False)\n"},
		{"unexpected", []string{"-e", `BEGIN { print(getopt("aa", 10)); }`, "--", "--bb"},
			1, "", "ERROR: unexpected program command line options: --bb\nHINT: expected program options: --aa\n"},
		{"help", []string{"-e", `BEGIN { print((getopt("aa", 10, "Description of aa"), getopt("bb"))); }`, "--", "--help"},
			1, "", "HINT: expected program options:\n--aa: Description of aa\n--bb\n"},
		{"attach point", []string{"-e", `BEG$1 { printf("hello %s\n", str($2)); exit(); }`, "IN", "2"}, 0, "hello 2", ""},
		{"whole attach point", []string{"-e", `$1 { printf("%lu\n", $2); exit(); }`, "i:ms:1", "0xffffffffffffffff"}, 0, "18446744073709551615", ""},
		{"unknown setting", []string{"-e", `config = { bad_config=raw } BEGIN {}`}, 1, "",
			"stdin:1:12-26: ERROR: bad_config: not a known configuration option\nconfig = { bad_config=raw } BEGIN {}\n           ~~~~~~~~~~~~~~\n"},
		{"maps not printed", []string{"-e", `config = { print_maps_on_exit = false } BEGIN { @a = 1; printf("done\n"); exit(); }`}, 0, "done", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := harness.Gtrace(t, tt.args...)
			want := tt.stderr
			if tt.code == 0 {
				want = "Attached 1 probe\n" + want // each script has one probe
			}
			if r.Code != tt.code || r.Stderr != want {
				t.Fatalf("exit %d, stderr:\n%s\nwant exit %d, stderr:\n%s", r.Code, r.Stderr, tt.code, want)
			}
			if !strings.Contains(r.Stdout, tt.stdout) {
				t.Errorf("stdout:\n%s\nwant a line %q", r.Stdout, tt.stdout)
			}
			if strings.Contains(r.Stdout, "@a") {
				t.Errorf("stdout:\n%s\nwant no maps", r.Stdout)
			}
		})
	}
}
