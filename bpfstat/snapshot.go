package bpfstat

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/link"
)

// Program is one BPF program loaded on the machine.
type Program struct {
	ID   uint32 `json:"id"`
	Type string `json:"type"`
	Name string `json:"name"`
	Tag  string `json:"tag"`
	// Attach describes the links that attach the program.
	Attach []string `json:"attach"`
	// Owners are the processes holding the program or one of its
	// links, as "comm[pid]".
	Owners []string `json:"owners"`
	// Runs and RunTimeNs count while BPF statistics are on.
	Runs      uint64 `json:"run_cnt"`
	RunTimeNs uint64 `json:"run_time_ns"`
}

// Snapshot lists every BPF program with its counters now.
func Snapshot() ([]Program, error) {
	owners := programOwners()
	attach := programLinks()
	var progs []Program
	id := ebpf.ProgramID(0)
	for {
		next, err := ebpf.ProgramGetNextID(id)
		if errors.Is(err, os.ErrNotExist) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("list BPF programs: %w", err)
		}
		id = next
		prog, err := ebpf.NewProgramFromID(id)
		if err != nil {
			continue // unloaded meanwhile
		}
		p := Program{ID: uint32(id), Type: prog.Type().String(), Attach: attach[id], Owners: owners[uint32(id)]}
		if info, err := prog.Info(); err == nil {
			p.Name, p.Tag = info.Name, info.Tag
		}
		if st, err := prog.Stats(); err == nil {
			p.Runs, p.RunTimeNs = st.RunCount, uint64(st.Runtime)
		}
		prog.Close()
		progs = append(progs, p)
	}
	return progs, nil
}

// programLinks describes the links of each program.
func programLinks() map[ebpf.ProgramID][]string {
	out := map[ebpf.ProgramID][]string{}
	it := new(link.Iterator)
	defer it.Close()
	for it.Next() {
		info, err := it.Link.Info()
		if err != nil {
			continue
		}
		out[info.Program] = append(out[info.Program], describe(info))
	}
	return out
}

// describe names what a link attaches to, as far as the kernel says.
func describe(info *link.Info) string {
	switch {
	case info.RawTracepoint() != nil:
		return "rawtracepoint:" + info.RawTracepoint().Name
	case info.KprobeMulti() != nil:
		return fmt.Sprintf("kprobe.multi:%d functions", info.KprobeMulti().Count)
	case info.PerfEvent() != nil:
		pe := info.PerfEvent()
		switch {
		case pe.Kprobe() != nil:
			return "kprobe:" + pe.Kprobe().Function
		case pe.Uprobe() != nil:
			return fmt.Sprintf("uprobe:%s+%#x", pe.Uprobe().File, pe.Uprobe().Offset)
		case pe.Tracepoint() != nil:
			return "tracepoint:" + pe.Tracepoint().Tracepoint
		}
		return "perf_event"
	case info.Tracing() != nil:
		return fmt.Sprintf("tracing:btf_id %d", info.Tracing().TargetBtfId)
	}
	return strings.TrimSuffix(strings.ToLower(fmt.Sprint(info.Type)), "type")
}

// programOwners maps program ids to the processes whose file
// descriptors hold them, directly or through a link.
func programOwners() map[uint32][]string {
	out := map[uint32][]string{}
	fdinfos, _ := filepath.Glob("/proc/[0-9]*/fdinfo/*")
	seen := map[string]bool{}
	for _, fi := range fdinfos {
		id, ok := progID(fi)
		if !ok {
			continue
		}
		pid := strings.Split(fi, "/")[2]
		comm, _ := os.ReadFile("/proc/" + pid + "/comm")
		owner := strings.TrimSpace(string(comm)) + "[" + pid + "]"
		if key := fmt.Sprint(id, owner); !seen[key] {
			seen[key] = true
			out[id] = append(out[id], owner)
		}
	}
	for _, o := range out {
		sort.Strings(o)
	}
	return out
}

// progID reads the prog_id line of a file descriptor's fdinfo.
func progID(fdinfo string) (uint32, bool) {
	f, err := os.Open(fdinfo)
	if err != nil {
		return 0, false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "prog_id:"); ok {
			id, err := strconv.ParseUint(strings.TrimSpace(v), 10, 32)
			return uint32(id), err == nil
		}
	}
	return 0, false
}
