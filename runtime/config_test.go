package runtime

import (
	"reflect"
	"strings"
	"testing"

	"gtrace/internal/testutils"
	"gtrace/output"
	"gtrace/sema"
)

// TestConfigSettings runs programs whose output a config setting changes.
func TestConfigSettings(t *testing.T) {
	testutils.RequireRoot(t)
	tests := []struct {
		name, src, want string
	}{
		{"config builtin", `BEGIN { printf("%d %s %d", config().max_strlen, config.stack_mode, __builtin_config.cpp_demangle); exit() }`,
			"1024 bpftrace 1"},
		{"config builtin reads the block", `config = { max_strlen = 16; license = "GPL v2" } BEGIN { printf("%d %s", config.max_strlen, config.license); exit() }`,
			"16 GPL v2"},
		{"maps printed", `BEGIN { @a = 1; exit() }`, "@a: 1"},
		{"maps not printed", `config = { print_maps_on_exit = 0 } BEGIN { @a = 1; @b["x"] = count(); exit() }`, ""},
		{"truncated", `config = { max_strlen = 4 } BEGIN { $s = "Linux"; printf("%s", str(&$s)); exit() }`, "Linu.."},
		{"trailer", `config = { max_strlen = 4; str_trunc_trailer = "~" } BEGIN { $s = "Linux"; print(str(&$s)); exit() }`, "Linu~"},
		{"not truncated", `config = { max_strlen = 6 } BEGIN { $s = "Linux"; printf("%s|", str(&$s)); exit() }`, "Linux|"},
		{"nothing on the stack", `config = { on_stack_limit = 0 } BEGIN { $x = "XXXX"; $y = $x; @k[1, "a"] = count(); print(($y, (1, 2))); exit() }`,
			"(XXXX, (1, 2))"},
		{"big strings", `config = { max_strlen = 9999 } BEGIN { $s = "Linux"; @s = str(&$s); printf("%s|", @s); exit() }`, "Linux|"},
		{"license", `config = { license = "Dual BSD/GPL" } BEGIN { printf("%d", 1); exit() }`, "1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, _ := runScript(t, tt.src)
			got = strings.TrimSpace(got)
			if tt.want == "" && got != "" || !strings.HasPrefix(got, tt.want) {
				t.Errorf("printed %q, want %q", got, tt.want)
			}
		})
	}
}

// TestTruncatedStrings checks which strings print with the trailer: one
// of max_strlen bytes with no NUL, as str() leaves one it cut short, and
// no other.
func TestTruncatedStrings(t *testing.T) {
	d := &decoder{maxStrlen: 5, trailer: ".."}
	tests := []struct {
		name string
		size int
		b    string
		want string
	}{
		{"cut short", 5, "hello", "hello.."},
		{"with its NUL", 5, "hell\x00", "hell"},
		{"another size", 4, "hell", "hell"},
	}
	for _, tt := range tests {
		got := d.value(&sema.Type{Kind: sema.String, Size: tt.size}, []byte(tt.b+"tail"))
		if want := output.Str(tt.want); !reflect.DeepEqual(got, want) {
			t.Errorf("%s: %v, want %v", tt.name, got, want)
		}
	}
}
