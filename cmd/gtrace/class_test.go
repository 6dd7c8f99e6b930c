package main

import (
	"bytes"
	"os"
	"strings"
	"testing"
	"time"

	"gtrace/internal/testutils"
)

// TestClassList lists this kernel's bio functions: the BTF scan and the
// traceable list, which this kernel has without kprobes.
func TestClassList(t *testing.T) {
	if _, err := os.Stat("/sys/kernel/btf/vmlinux"); err != nil {
		testutils.Skip(t, "no kernel BTF")
	}
	for _, tc := range []struct {
		args       []string
		code       int
		want, not  []string
		wantStderr string
	}{
		{args: []string{"bio", "--list"}, want: []string{"submit_bio arg0\n", "bio_endio arg0\n", "bio_init arg0\n"},
			not: []string{"__bpf_trace_"}},
		{args: []string{"struct bio", "--list", "--funcs", "submit_bio*"}, want: []string{"submit_bio arg0\n"}, not: []string{"bio_endio"}},
		// struct tcp_sock begins with a struct sock.
		{args: []string{"--list", "sock"}, want: []string{"tcp_sendmsg arg0\n", " (struct tcp_sock)\n"}},
		{args: []string{"nosuch_struct", "--list"}, code: 1, wantStderr: "ERROR: struct nosuch_struct is not in the kernel's BTF\n"},
		{args: []string{"bio", "--list", "--funcs", "no_such_fn*"}, code: 1,
			wantStderr: "ERROR: no traceable function takes a struct bio pointer in its first 5 parameters\n"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := run(append([]string{"class"}, tc.args...), &stdout, &stderr)
			if code != tc.code || stderr.String() != tc.wantStderr {
				t.Fatalf("exit %d, want %d; stderr %q, want %q", code, tc.code, stderr.String(), tc.wantStderr)
			}
			for _, w := range tc.want {
				if !strings.Contains(stdout.String(), w) {
					t.Errorf("no %q in the list:\n%s", w, stdout.String())
				}
			}
			for _, n := range tc.not {
				if strings.Contains(stdout.String(), n) {
					t.Errorf("%q in the list", n)
				}
			}
		})
	}
}

func TestParseClassArgs(t *testing.T) {
	o, err := parseClassArgs([]string{"--comm", "dd", "bio", "-d", "1.5", "--cpu", "0", "-o", "t.json", "--funcs", "bio_*,submit_bio*"})
	if err != nil {
		t.Fatal(err)
	}
	if o.structName != "bio" || o.comm != "dd" || o.duration != 1500*time.Millisecond || o.cpu != 0 ||
		o.outFile != "t.json" || len(splitList(o.funcs)) != 2 {
		t.Errorf("parsed %+v", o)
	}
	o, err = parseClassArgs([]string{"--serve", "127.0.0.1:0", "t.json"})
	if err != nil || o.serve != "127.0.0.1:0" || o.file != "t.json" || o.structName != "" {
		t.Errorf("--serve parsed %+v, %v", o, err)
	}
	for _, args := range [][]string{{}, {"bio", "sock"}, {"bio", "-d", "x"}, {"bio", "-d", "-1"}, {"bio", "--cpu", "-2"}, {"bio", "--nosuch"},
		{"--serve", ":0"}, {"--serve", ":0", "--comm", "dd", "t.json"}, {"--serve", ":0", "a.json", "b.json"}} {
		if _, err := parseClassArgs(args); err == nil {
			t.Errorf("%q parsed", args)
		}
	}
}

// TestClassOptionErrors checks that gtrace class shows an error in
// --fields or --filter in the option's text, before loading anything.
func TestClassOptionErrors(t *testing.T) {
	if _, err := os.Stat("/sys/kernel/btf/vmlinux"); err != nil {
		testutils.Skip(t, "no kernel BTF")
	}
	if os.Geteuid() != 0 {
		testutils.Skip(t, "gtrace class checks its privileges before its options' values")
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--fields", "bi_opf,a..b"}, "--fields:1:8-12: ERROR: \"a..b\" is not a member path, such as bi_iter.bi_size\nbi_opf,a..b\n       ~~~~\n"},
		{[]string{"--filter", "x; y"}, "--filter:1:2-3: ERROR: ';' is not allowed in a predicate: it reads the object's members, and builtins such as pid or comm\nx; y\n ~\n"},
	} {
		var stdout, stderr bytes.Buffer
		args := append([]string{"class", "bio", "--funcs", "submit_bio"}, tc.args...)
		if code := run(args, &stdout, &stderr); code != 1 || stderr.String() != tc.want {
			t.Errorf("%q: exit %d, stderr\n%s\nwant\n%s", args, code, stderr.String(), tc.want)
		}
	}
}
