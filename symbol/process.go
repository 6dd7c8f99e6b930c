package symbol

import (
	"fmt"
	"os"
	"strings"
)

// MappedFiles lists the files that process pid maps executable, such as
// its program and its libraries, in address order, each once, as the
// process names them (in its own mount namespace).
func MappedFiles(pid int) ([]string, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/maps", pid))
	if err != nil {
		return nil, fmt.Errorf("read maps of process %d: %w", pid, err)
	}
	maps, err := parseMaps(string(data))
	if err != nil {
		return nil, fmt.Errorf("parse maps of process %d: %w", pid, err)
	}
	seen := map[string]bool{}
	var out []string
	for _, m := range maps {
		if !m.exec || !strings.HasPrefix(m.path, "/") || strings.HasSuffix(m.path, " (deleted)") || seen[m.path] {
			continue
		}
		seen[m.path] = true
		out = append(out, m.path)
	}
	return out, nil
}

// ProcessRoot is the directory through which gtrace sees the files of
// process pid: "/proc/PID/root" when the process is in another mount
// namespace, as in a container, and "" when it sees what gtrace sees.
func ProcessRoot(pid int) string {
	own, err1 := os.Readlink("/proc/self/ns/mnt")
	its, err2 := os.Readlink(fmt.Sprintf("/proc/%d/ns/mnt", pid))
	if err1 != nil || err2 != nil || own == its {
		return ""
	}
	return fmt.Sprintf("/proc/%d/root", pid)
}

// Mapping is an executable file mapping of a process.
type Mapping struct {
	Start, End uint64 // [Start, End)
	Offset     uint64 // the file offset mapped at Start
	Path       string // as the process names it
}

// ExecMappings lists the executable mappings of files of process pid,
// in address order.
func ExecMappings(pid int) ([]Mapping, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/maps", pid))
	if err != nil {
		return nil, fmt.Errorf("read maps of process %d: %w", pid, err)
	}
	maps, err := parseMaps(string(data))
	if err != nil {
		return nil, fmt.Errorf("parse maps of process %d: %w", pid, err)
	}
	var out []Mapping
	for _, m := range maps {
		if m.exec && strings.HasPrefix(m.path, "/") {
			out = append(out, Mapping{Start: m.start, End: m.end, Offset: m.offset, Path: m.path})
		}
	}
	return out, nil
}
