package runtime

import (
	"testing"

	"gtrace/internal/testutils"
)

// TestWideningRun checks what maps and variables print once their
// integers have widened, as bpftrace prints them.
func TestWideningRun(t *testing.T) {
	testutils.RequireRoot(t)
	tests := []struct{ name, script, want string }{
		{"value to int64", `BEGIN { @m[1] = (uint8)1; @m[2] = (int64)-1; }`, "\n\n@m[2]: -1\n@m[1]: 1\n"},
		{"value to int16", `BEGIN { @c = (uint8)200; @c = (int8)-100; }`, "\n\n@c: -100\n"},
		{"literal takes the sign", `BEGIN { @u = (uint64)1; @u = 18446744073709551615; @u += 0; }`, "\n\n@u: 18446744073709551615\n"},
		{"keys", `BEGIN { @a[(uint8)1] = 1; @a[(int8)-1] = 2; @b[(uint16)65535, "x"] = 1; @b[(int16)-2, "yy"] = 2; }`,
			"\n\n@a[1]: 1\n@a[-1]: 2\n@b[65535, x]: 1\n@b[-2, yy]: 2\n"},
		{"tuple values", `BEGIN { @t[1] = ((uint8)1, "a"); @t[2] = ((int64)-1, "bb"); }`, "\n\n@t[1]: (1, a)\n@t[2]: (-1, bb)\n"},
		{"variables", `BEGIN { $y = (uint8)255; @y = $y; $y = (int8)-1; @z = $y; $t = ((uint8)1, "a"); $t = ((int64)-1, "bcd"); @t = $t; }`,
			"\n\n@t: (-1, bcd)\n@y: 255\n@z: -1\n"},
		{"bools", `BEGIN { @a[true] = false; @b[1 == 1, 2] = 1 != 1; }`, "\n\n@a[true]: false\n@b[true, 2]: false\n"},
		{"sizeof", `BEGIN { @s = (sizeof(uint8), sizeof(int16), sizeof(u32), sizeof(int64), sizeof(bool)); }`, "\n\n@s: (1, 2, 4, 8, 1)\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, _ := runScript(t, tt.script)
			if got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}
