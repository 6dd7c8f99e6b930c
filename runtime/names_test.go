package runtime

import (
	"strings"
	"testing"

	"gtrace/internal/testutils"
)

// TestNames runs strerror() and syscall_name(): texts by number, and the
// unknown text for a number without one or out of range.
func TestNames(t *testing.T) {
	testutils.RequireRoot(t)
	tests := []struct{ body, want string }{
		{`printf("%s|%s", strerror(2), strerror(-13))`, "No such file or directory|Permission denied"},
		{`printf("%s|%s", strerror(0), strerror(100000))`, "Success|Unknown error"},
		{`printf("%s|%s|%s", syscall_name(0), syscall_name(257), syscall_name(-1))`, "read|openat|Unknown syscall"},
		{`$n = 59; @[syscall_name($n)] = count(); for ($kv : @) { printf("%s", $kv.0); }`, "execve"},
	}
	for _, tt := range tests {
		t.Run(tt.body, func(t *testing.T) {
			got, _ := runScript(t, "BEGIN { "+tt.body+"; exit(); }")
			if !strings.HasPrefix(got, tt.want) {
				t.Errorf("printed %q, want %q", got, tt.want)
			}
		})
	}
}
