package testutils

import (
	"os/exec"
	"strings"
	"testing"
)

// NetnsVeth makes the network namespace name, joined to the host's by a
// veth pair, name+"h" on the host's end with hostIP and name+"p" in the
// namespace with podIP, both in one /30. The namespace and the link are
// removed when tb ends, even after a failure.
func NetnsVeth(tb testing.TB, name, hostIP, podIP string) {
	tb.Helper()
	if _, err := exec.LookPath("ip"); err != nil {
		Skip(tb, "ip is not installed (Debian: iproute2)")
	}
	run := func(args ...string) {
		tb.Helper()
		if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
			tb.Fatalf("ip %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	run("netns", "add", name)
	tb.Cleanup(func() { exec.Command("ip", "netns", "del", name).Run() })
	run("link", "add", name+"h", "type", "veth", "peer", "name", name+"p", "netns", name)
	tb.Cleanup(func() { exec.Command("ip", "link", "del", name+"h").Run() })
	run("addr", "add", hostIP+"/30", "dev", name+"h")
	run("link", "set", name+"h", "up")
	run("-n", name, "addr", "add", podIP+"/30", "dev", name+"p")
	run("-n", name, "link", "set", name+"p", "up")
}
