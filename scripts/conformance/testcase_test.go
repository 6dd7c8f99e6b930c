package main

import (
	"reflect"
	"strings"
	"testing"
)

func TestParseCases(t *testing.T) {
	tests := []struct {
		name, text string
		want       []testCase
	}{
		{
			name: "two cases, comments and defaults",
			text: "# a comment\nNAME one\nPROG begin { exit(); }\nEXPECT hi\n\nNAME two\nRUN {{BPFTRACE}} -e 'x'\nEXPECT_REGEX ^a+$\nTIMEOUT 2\n",
			want: []testCase{
				{file: "f", name: "one", line: 2, prog: "begin { exit(); }", expects: []expect{{expectText, "hi"}}, timeout: 5, localizeTS: -1, env: map[string]string{}},
				{file: "f", name: "two", line: 6, run: "{{BPFTRACE}} -e 'x'", expects: []expect{{expectRegex, "^a+$"}}, timeout: 2, localizeTS: -1, env: map[string]string{}},
			},
		},
		{
			name: "continued PROG and EXPECT, last case without a newline",
			text: "NAME multi\nPROG begin {\n     printf(\"a\\n\");\n     exit(); }\nEXPECT a\n       b\nEXPECT_NONE c",
			want: []testCase{{
				file: "f", name: "multi", line: 1,
				prog:    "begin {\nprintf(\"a\\n\");\nexit(); }",
				expects: []expect{{expectText, "a\nb"}, {expectTextNone, "c"}},
				timeout: 5, localizeTS: -1, env: map[string]string{},
			}},
		},
		{
			name: "every other directive",
			text: "NAME all\nRUN x\nEXPECT_FILE runtime/outputs/o.txt\nBEFORE ./a\nBEFORE ./b\nAFTER ./c\nSETUP s\nCLEANUP k\n" +
				"MIN_KERNEL 5.5\nMAX_KERNEL 7.0\nREQUIRES true\nENV A=1 B=2\nARCH x86_64|!s390x\nREQUIRES_FEATURE btf !fentry\n" +
				"WILL_FAIL\nNEW_PIDNS\nSKIP_IF_ENV_HAS CI=true\nLOCALIZE_TIMESTAMPS 0\n",
			want: []testCase{{
				file: "f", name: "all", line: 1, run: "x", exact: true,
				expects: []expect{{expectFile, "runtime/outputs/o.txt"}},
				timeout: 5, befores: []string{"./a", "./b"}, after: "./c", setup: "s", cleanup: "k",
				minKernel: "5.5", maxKernel: "7.0", requires: []string{"true"},
				env: map[string]string{"A": "1", "B": "2"}, arch: []string{"x86_64", "!s390x"},
				features: []string{"btf"}, notFeatures: []string{"fentry"},
				willFail: true, newPidNS: true, skipIfEnv: []string{"CI", "true"}, localizeTS: 0,
			}},
		},
		{
			name: "RETURN_CODE alone is enough",
			text: "NAME rc\nRUN false\nRETURN_CODE 1\n",
			want: []testCase{{file: "f", name: "rc", line: 1, run: "false", timeout: 5, returnCode: 1, hasReturnCode: true, localizeTS: -1, env: map[string]string{}}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseCases("f", strings.NewReader(tt.text))
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got  %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

func TestParseCasesErrors(t *testing.T) {
	tests := []struct{ name, text, want string }{
		{"no name", "RUN x\nEXPECT y\n", "NAME is required"},
		{"no command", "NAME a\nEXPECT y\n", "RUN or PROG is required"},
		{"both commands", "NAME a\nRUN x\nPROG y\nEXPECT y\n", "both RUN and PROG"},
		{"no expectation", "NAME a\nRUN x\n", "an EXPECT is required"},
		{"exact with others", "NAME a\nRUN x\nEXPECT_JSON f.json\nEXPECT y\n", "with other EXPECTs"},
		{"unknown directive", "NAME a\nRUNS x\n", "RUNS is not a runtime test directive"},
		{"unknown feature", "NAME a\nRUN x\nEXPECT y\nREQUIRES_FEATURE warp\n", `unknown feature "warp"`},
		{"bad ENV", "NAME a\nRUN x\nEXPECT y\nENV A\n", "want NAME=VALUE"},
		{"bad TIMEOUT", "NAME a\nRUN x\nEXPECT y\nTIMEOUT soon\n", "TIMEOUT"},
		{"WILL_FAIL with RETURN_CODE", "NAME a\nRUN x\nWILL_FAIL\nRETURN_CODE 2\n", "WILL_FAIL with RETURN_CODE"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := parseCases("f", strings.NewReader(tt.text))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %v, want one containing %q", err, tt.want)
			}
		})
	}
}

func TestArchMatches(t *testing.T) {
	host := []string{"x86_64", "le"}
	tests := []struct {
		arch []string
		want bool
	}{
		{nil, true},
		{[]string{"x86_64"}, true},
		{[]string{"aarch64", "x86_64"}, true},
		{[]string{"aarch64"}, false},
		{[]string{"!x86_64"}, false},
		{[]string{"!s390x"}, true},
		{[]string{"le"}, true},
		{[]string{"!be"}, true},
		{[]string{"x86_64", "!le"}, false},
	}
	for _, tt := range tests {
		if got := archMatches(tt.arch, host); got != tt.want {
			t.Errorf("archMatches(%q) = %v, want %v", tt.arch, got, tt.want)
		}
	}
}

func TestCompareVersions(t *testing.T) {
	tests := []struct {
		a, b string
		want int
	}{
		{"5.15", "6.18.44-fc-v657", -1},
		{"6.18", "6.18.44-fc-v657", -1},
		{"6.19", "6.18.44", 1},
		{"6.18.44", "6.18.44-fc", 0},
	}
	for _, tt := range tests {
		if got := compareVersions(tt.a, tt.b); got != tt.want {
			t.Errorf("compareVersions(%q, %q) = %d, want %d", tt.a, tt.b, got, tt.want)
		}
	}
}

func TestProviderRegexps(t *testing.T) {
	tests := []struct {
		text string
		want []bool // kprobes, fentry
	}{
		{"kprobe:vfs_read { }", []bool{true, false}},
		{"begin { exit() } kr:vfs_read { }", []bool{true, false}},
		{"{{BPFTRACE}} -l 'kretprobe:*'", []bool{true, false}},
		{"fentry:vfs_open { }", []bool{false, true}},
		{`{{BPFTRACE}} -lv "fexit:*"`, []bool{false, true}},
		{"struct s { int e:9, f:15 }", []bool{false, false}},
		{"tracepoint:block:block_rq_issue { }", []bool{false, false}},
		{`printf("k: %d\n", 1)`, []bool{false, false}},
	}
	for _, tt := range tests {
		for i, p := range providerNeeds {
			if got := p.re.MatchString(tt.text); got != tt.want[i] {
				t.Errorf("%s matches %q: %v, want %v", p.feature, tt.text, got, tt.want[i])
			}
		}
	}
}
