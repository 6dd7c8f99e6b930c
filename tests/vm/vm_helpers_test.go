package vm

import (
	"regexp"
	"strings"
	"testing"
	"time"

	"gtrace/internal/vmtest"
)

// vmHelpersScript runs the helpers that need what the host kernel lacks:
// percpu_kaddr needs a kernel that lists its per-CPU variables in
// kallsyms (CONFIG_KALLSYMS_ALL, as Debian's), socket_cookie of an fentry
// argument and skboutput in fentry need fentry, and a kprobe's func is the
// function's address, printed by name. The TCP connection goes to a
// closed port on the guest's loopback.
const vmHelpersScript = vmShellFuncs + `
ip link set lo up
dd if=/dev/zero of=/tmp/data bs=1000 count=10 2>/dev/null
CONNECT="wget -q -O /dev/null http://127.0.0.1:9/"

section percpu /gtrace -e 'BEGIN {
	printf("processes: %d\n", *percpu_kaddr("process_counts", 0));
	if (*percpu_kaddr("process_counts") == *percpu_kaddr("process_counts", cpu)) { printf("same\n"); }
	exit();
}'

section cookie /gtrace -e 'fentry:tcp_v4_connect { printf("cookie: %llu\n", socket_cookie(args.sk)); exit(); }' -c "$CONNECT"

section skboutput /gtrace -e 'fentry:__dev_queue_xmit { $ret = skboutput("/tmp/skb.pcap", args.skb, args.skb.len, 14); printf("ret: %d\n", $ret); exit(); }' -c "$CONNECT"
section pcap sh -c 'test -s /tmp/skb.pcap && echo written'

section func /gtrace -e 'kprobe:vfs_read /comm == "dd"/ { @[func] = count(); printf("%s\n", func); exit(); }' -c "dd if=/tmp/data of=/dev/null bs=4096"
`

// TestVMHelpers runs the standard library's kernel helpers that the host
// cannot load on both guest kernels.
func TestVMHelpers(t *testing.T) {
	files := map[string]string{"/gtrace": vmtest.BuildGtrace(t)}
	for _, k := range vmtest.Kernels {
		t.Run(k.Name, func(t *testing.T) {
			sections := guestSections(t, vmtest.Config{Kernel: k, Files: files, Timeout: 3 * time.Minute}, vmHelpersScript)
			for _, c := range []struct {
				section string
				want    *regexp.Regexp
			}{
				{"percpu", regexp.MustCompile(`(?m)^processes: -?\d+\nsame$`)},
				{"cookie", regexp.MustCompile(`(?m)^cookie: [1-9]\d*$`)},
				{"skboutput", regexp.MustCompile(`(?m)^ret: 0$`)},
				{"pcap", regexp.MustCompile(`(?m)^written$`)},
				{"func", regexp.MustCompile(`(?m)^vfs_read\n(?s:.*)^@\[vfs_read\]: [1-4]$`)},
			} {
				t.Run(c.section, func(t *testing.T) {
					s := sections.get(t, c.section, 0)
					if !c.want.MatchString(s.stdout) {
						t.Errorf("stdout does not match %s", c.want)
					}
					if strings.Contains(s.stderr, "ERROR") {
						t.Errorf("stderr has an error")
					}
				})
			}
		})
	}
}
