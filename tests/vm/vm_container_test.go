package vm

import (
	"regexp"
	"testing"
	"time"

	"gtrace/internal/vmtest"
)

// vmContainerScript runs the container filters on kprobes and fentry,
// which the host lacks: two identical workloads (ash, a name no other
// guest process has, sourcing /tmp/w), one in a cgroup or a PID
// namespace of its own; the filtered count keeps that one's opens
// alone. The guest's init mounts no cgroup v2, so the script does. Each
// workload waits on a FIFO that gtrace's -c command opens once the
// probes are attached.
const vmContainerScript = vmShellFuncs + `
mkdir -p /sys/fs/cgroup
mount -t cgroup2 none /sys/fs/cgroup
mkdir /sys/fs/cgroup/box
: > /tmp/opened
echo 'i=0; while [ $i -lt 7 ]; do : < /tmp/opened; i=$((i+1)); done' > /tmp/w
mkfifo /tmp/go1 /tmp/go2
echo 'echo > /tmp/go1; echo > /tmp/go2; sleep 1' > /tmp/release

ash -c 'echo $$ > /sys/fs/cgroup/box/cgroup.procs; read x < /tmp/go1; . /tmp/w' &
ash -c 'read x < /tmp/go2; . /tmp/w' &
sleep 0.5
section cgroup /gtrace --cgroup /box -e 'kprobe:do_sys_openat2 /comm == "ash"/ { @[pid] = count(); }' -c "sh /tmp/release"
wait

unshare -p -f ash -c 'readlink /proc/self/ns/pid > /tmp/ns; read x < /tmp/go1; . /tmp/w' &
ash -c 'read x < /tmp/go2; . /tmp/w' &
while [ ! -s /tmp/ns ]; do sleep 0.1; done
section pidns /gtrace --pidns "$(cat /tmp/ns)" -e 'fentry:do_sys_openat2 /comm == "ash"/ { @[pid] = count(); }' -c "sh /tmp/release"
wait
`

// TestVMContainer runs the cgroup filter on a kprobe and the PID
// namespace filter on fentry, on both guest kernels.
func TestVMContainer(t *testing.T) {
	files := map[string]string{"/gtrace": vmtest.BuildGtrace(t)}
	entry := regexp.MustCompile(`(?m)^@\[\d+\]: (\d+)$`)
	for _, k := range vmtest.Kernels {
		t.Run(k.Name, func(t *testing.T) {
			sections := guestSections(t, vmtest.Config{Kernel: k, Files: files, Timeout: 3 * time.Minute}, vmContainerScript)
			for _, name := range []string{"cgroup", "pidns"} {
				t.Run(name, func(t *testing.T) {
					s := sections.get(t, name, 0)
					// Each workload opens /tmp/w and then /tmp/opened 7 times.
					m := entry.FindAllStringSubmatch(s.stdout, -1)
					if len(m) != 1 || m[0][1] != "8" {
						t.Errorf("want one workload's 8 opens, got %q", m)
					}
				})
			}
		})
	}
}
