package vm

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"gtrace/internal/vmtest"
)

// The tools of tools/nvme trace the zoned namespace nvme0n2 (see
// vm_storage_test.go) while tests/testdata/blkio drives it: the reads and
// resets of vm_storage_test.go, and beside them direct writes through the
// block layer and zone appends through NVMe passthrough, which has the
// only zone append a program can send; then a reset of all zones, and
// one admin command, an Identify, to the controller nvme0. Each kernel boots once, with a queue
// per CPU, so that completions come in batches as they do on a real
// machine.

// The zoned namespace's writes (4096 bytes at each sector, each at its
// zone's write pointer) and appends (4096 bytes to the zone starting at
// each sector), beside vmZoneReads and the resets.
var (
	vmZoneWrites  = []int{16384, 16392, 40960}
	vmZoneAppends = []int{16384, 40960, 40960, 73728, 73728, 73728}
)

// vmNVMeScript is the guest's shell script: the tools, started before
// the I/O and stopped after it. $ZREADS, $ZWRITES, $ZAPPENDS, $NRESETS and
// $PRESETS hold the sectors of the I/O.
const vmNVMeScript = vmShellFuncs + `
start() {
	name=$1
	shift
	/gtrace tools "$@" >/tmp/$name.out 2>/tmp/$name.err &
	eval pid_$name=$!
	wait_links $! 2 >>/tmp/$name.err
}
stop() {
	eval pid=\$pid_$1
	kill -INT $pid
	wait $pid
	emit $1 $? /tmp/$1.out /tmp/$1.err
}

start nvmecmd nvmecmd -d nvme0n2
start snoop nvmecmd --snoop -u -d nvme0n2
start admin nvmecmd -d nvme0
start all nvmecmd
start zonestat zonestat -d nvme0n2
section io sh -c "
	/blkio read /dev/nvme0n2 4096 $ZREADS &&
	/blkio write /dev/nvme0n2 4096 $ZWRITES &&
	/blkio nvme-append /dev/ng0n2 4096 $ZAPPENDS &&
	/blkio reset /dev/nvme0n2 $NRESETS &&
	/blkio nvme-reset /dev/ng0n2 $PRESETS &&
	/blkio reset-all /dev/nvme0n2 &&
	/blkio nvme-identify /dev/nvme0"
for name in nvmecmd snoop admin all zonestat; do
	stop $name
done

# Two outputs a second apart, then exit.
section nvmecmd-interval /gtrace tools nvmecmd -uT 1 2
section zonestat-interval /gtrace tools zonestat -T 1 2
`

// vmZoneResets are the resets of one zone, by sector: through the block
// layer, then through passthrough.
func vmZoneResets() []int {
	return append(slices.Clone(vmNormalResets), vmPassthroughResets...)
}

// vmNVMeCommands are the commands of the I/O, by opcode.
func vmNVMeCommands() map[string][]int {
	cmds := map[string][]int{
		"nvme_cmd_write":       vmZoneWrites,
		"nvme_cmd_zone_append": vmZoneAppends,
	}
	for _, zone := range slices.Sorted(maps.Keys(vmZoneReads)) {
		cmds["nvme_cmd_read"] = append(cmds["nvme_cmd_read"], vmZoneReads[zone]...)
	}
	// The reset of all zones is one command, at LBA 0.
	cmds["nvme_cmd_zone_mgmt_send"] = append(vmZoneResets(), 0)
	return cmds
}

func TestVMNVMeTools(t *testing.T) {
	files := map[string]string{
		"/gtrace": vmtest.BuildGtrace(t),
		"/blkio":  buildTestdata(t, "blkio"),
	}
	cmds := vmNVMeCommands()
	env := map[string]string{
		"ZREADS":   sectorList(cmds["nvme_cmd_read"]),
		"ZWRITES":  sectorList(vmZoneWrites),
		"ZAPPENDS": sectorList(vmZoneAppends),
		"NRESETS":  sectorList(vmNormalResets),
		"PRESETS":  sectorList(vmPassthroughResets),
	}
	for _, k := range vmtest.Kernels {
		t.Run(k.Name, func(t *testing.T) {
			sections := guestSections(t, vmtest.Config{
				Kernel:  k,
				Files:   files,
				Env:     env,
				NVMe:    true,
				Timeout: 4 * time.Minute,
			}, vmNVMeScript)
			sections.get(t, "io", 0)
			// -d nvme0n2 leaves out the controller's admin commands,
			// -d nvme0 the namespaces' I/O.
			t.Run("nvmecmd", func(t *testing.T) {
				out := sections.get(t, "nvmecmd", 0).stdout
				checkNVMeCmd(t, out, cmds)
				if m := vmMaps(out)["admin_cmds"]; m != nil {
					t.Errorf("@admin_cmds = %v, want none", m)
				}
			})
			t.Run("admin", func(t *testing.T) {
				out := sections.get(t, "admin", 0).stdout
				checkAdmin(t, out)
				if m := vmMaps(out)["cmds"]; m != nil {
					t.Errorf("@cmds = %v, want none", m)
				}
			})
			t.Run("all", func(t *testing.T) {
				out := sections.get(t, "all", 0).stdout
				checkNVMeCmd(t, out, cmds)
				checkAdmin(t, out)
			})
			t.Run("snoop", func(t *testing.T) {
				checkSnoop(t, sections.get(t, "snoop", 0).stdout, cmds)
			})
			// The tools exit by themselves after COUNT outputs. A
			// loaded host may run one more tick before gtrace
			// handles the exit() (seen once on 6.1 under a load of
			// 11), so more than two time lines are not an error.
			t.Run("interval", func(t *testing.T) {
				for _, name := range []string{"nvmecmd-interval", "zonestat-interval"} {
					out := sections.get(t, name, 0).stdout
					if n := len(vmTimeLine.FindAllString(out, -1)); n < 2 {
						t.Errorf("%s: %d time lines, want 2 or more:\n%s", name, n, out)
					}
				}
			})
			t.Run("zonestat", func(t *testing.T) {
				out := sections.get(t, "zonestat", 0).stdout
				t.Logf("zonestat -d nvme0n2:\n%s", out)
				checkZonestat(t, out)
			})
		})
	}
}

// checkNVMeCmd checks nvmecmd's counts for nvme0n2: one per command of
// cmds, by opcode, and a histogram of as many latencies. Other disks and
// the controller's admin commands are not the I/O's.
func checkNVMeCmd(t *testing.T, out string, cmds map[string][]int) {
	want := map[string]int{}
	for op, sectors := range cmds {
		want["nvme0n2, "+op] = len(sectors)
	}
	got := map[string]int{}
	for key, n := range vmMaps(out)["cmds"] {
		if strings.HasPrefix(key, "nvme0n2, ") {
			got[key] = n
		}
	}
	if !maps.Equal(got, want) {
		t.Errorf("@cmds for nvme0n2 = %v, want %v", got, want)
	}
	for key, n := range want {
		total := 0
		for _, c := range vmHist(out, "@latency["+key+"]:") {
			total += c
		}
		if total != n {
			t.Errorf("@latency[%s] holds %d latencies, want %d", key, total, n)
		}
	}
}

// checkAdmin checks nvmecmd's count of the admin commands of nvme0: the
// one Identify, and a histogram of its latency. The kernel sends none of
// its own while the I/O runs.
func checkAdmin(t *testing.T, out string) {
	const key = "nvme0, nvme_admin_identify"
	if got := vmMaps(out)["admin_cmds"]; !maps.Equal(got, map[string]int{key: 1}) {
		t.Errorf("@admin_cmds = %v, want one Identify", got)
	}
	if rows := vmHist(out, "@admin_latency["+key+"]:"); len(rows) != 1 || slices.Collect(maps.Values(rows))[0] != 1 {
		t.Errorf("@admin_latency[%s] = %v, want one latency", key, rows)
	}
}

// vmSnoopLine is a line of nvmecmd --snoop for an I/O command.
var vmSnoopLine = regexp.MustCompile(`^\d+ +(\S+) +(nvme_cmd_\w+) +(\d+) +(\w+) +(\d+)$`)

// checkSnoop checks nvmecmd --snoop: a line per command of cmds, with
// its first LBA (the sector, as blocks are 512 bytes; an append's is its
// zone's), status 0 and a latency in microseconds.
func checkSnoop(t *testing.T, out string, cmds map[string][]int) {
	lines := vmLines(out)
	if len(lines) == 0 || !strings.HasPrefix(lines[0], "TIME(ms)   DISK       OPCODE") || !strings.HasSuffix(lines[0], "LAT(us)") {
		t.Fatalf("no header line:\n%s", out)
	}
	got := map[string][]int{}
	for _, line := range lines[1:] {
		m := vmSnoopLine.FindStringSubmatch(line)
		if m == nil {
			t.Errorf("line %q: want an I/O command to nvme0n2", line)
			continue
		}
		lba, _ := strconv.Atoi(m[3])
		us, _ := strconv.Atoi(m[5])
		if m[1] != "nvme0n2" || m[4] != "0" || us <= 0 || us > int(10*time.Second/time.Microsecond) {
			t.Errorf("line %q: want nvme0n2, status 0 and a latency", line)
		}
		got[m[2]] = append(got[m[2]], lba)
	}
	if !maps.EqualFunc(got, cmds, slices.Equal) {
		t.Errorf("first LBAs by opcode, in order: %v, want %v", got, cmds)
	}
}

// vmTimeLine is the time printed with -T.
var vmTimeLine = regexp.MustCompile(`(?m)^\d\d:\d\d:\d\d$`)

// vmStatsEntry is an entry of a stats() map with a two-part key.
var vmStatsEntry = regexp.MustCompile(`(?m)^@(\w+)\[(.*)\]: \{ \.count = (\d+), \.average = (\d+), \.total = (\d+) \}$`)

// checkZonestat checks zonestat's counts per zone of nvme0n2, a reset
// latency for each reset of a zone, and the one reset of all zones.
func checkZonestat(t *testing.T, out string) {
	m := vmMaps(out)
	if got := m["zone_sectors"]; !maps.Equal(got, map[string]int{"nvme0n2": 8192}) {
		t.Errorf("@zone_sectors = %v, want nvme0n2's 8192", got)
	}
	perZone := func(sectors []int) map[string]int {
		counts := map[string]int{}
		for _, s := range sectors {
			counts[fmt.Sprintf("nvme0n2, %d", s-s%8192)]++
		}
		return counts
	}
	cmds := vmNVMeCommands()
	resets := perZone(vmZoneResets())
	for name, want := range map[string]map[string]int{
		"reads":   perZone(cmds["nvme_cmd_read"]),
		"writes":  perZone(vmZoneWrites),
		"appends": perZone(vmZoneAppends),
		"resets":  resets,
	} {
		if !maps.Equal(m[name], want) {
			t.Errorf("@%s = %v, want %v", name, m[name], want)
		}
	}
	if got := m["resets_all"]; !maps.Equal(got, map[string]int{"nvme0n2": 1}) {
		t.Errorf("@resets_all = %v, want one of nvme0n2", got)
	}
	latencies := map[string]int{}
	for _, e := range vmStatsEntry.FindAllStringSubmatch(out, -1) {
		if e[1] != "reset_usecs" {
			continue
		}
		latencies[e[2]], _ = strconv.Atoi(e[3])
		if avg, _ := strconv.Atoi(e[4]); avg <= 0 || avg > int(10*time.Second/time.Microsecond) {
			t.Errorf("%q: average latency out of range", e[0])
		}
	}
	if !maps.Equal(latencies, resets) {
		t.Errorf("@reset_usecs counts %v, want %v", latencies, resets)
	}
}
