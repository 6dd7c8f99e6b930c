package kernel

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	"github.com/cilium/ebpf/features"
)

// TraceableFunctions lists the kernel functions kprobes can attach to,
// from tracefs' available_filter_functions, without duplicates and with
// module functions named as "module:function".
func TraceableFunctions() ([]string, error) {
	data, err := readTracefs("available_filter_functions")
	if err != nil {
		// Without ftrace the list is refused; kallsyms' text symbols
		// are the next best list, as bpftrace also falls back to.
		if data, err = kallsymsFunctions(); err != nil {
			return nil, fmt.Errorf("list traceable kernel functions: %w", err)
		}
	}
	seen := map[string]bool{}
	var out []string
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		// "name" or "name [module]"
		name, mod, _ := strings.Cut(sc.Text(), " ")
		if mod = strings.Trim(mod, "[]"); mod != "" {
			name = mod + ":" + name
		}
		if name != "" && !seen[name] {
			seen[name] = true
			out = append(out, name)
		}
	}
	sort.Strings(out)
	return out, sc.Err()
}

// ExpandFunctions returns the traceable functions matching pattern, a
// function name with '*' wildcards, or "module:function".
func ExpandFunctions(pattern string) ([]string, error) {
	all, err := TraceableFunctions()
	if err != nil {
		return nil, err
	}
	var out []string
	for _, f := range all {
		name := f
		if i := strings.Index(f, ":"); i >= 0 && !strings.Contains(pattern, ":") {
			// A bare pattern matches vmlinux and module functions alike.
			name = f[i+1:]
		}
		if Match(pattern, name) {
			out = append(out, f)
		}
	}
	return out, nil
}

// kallsymsFunctions lists /proc/kallsyms' text symbols in the format of
// available_filter_functions.
func kallsymsFunctions() ([]byte, error) {
	data, err := os.ReadFile("/proc/kallsyms")
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		// "ffffffff816bab70 T vfs_read" or "... t name\t[module]"
		f := strings.Fields(sc.Text())
		if len(f) < 3 || (f[1] != "T" && f[1] != "t") {
			continue
		}
		b.WriteString(f[2])
		if len(f) > 3 {
			b.WriteString(" " + f[3])
		}
		b.WriteByte('\n')
	}
	return b.Bytes(), sc.Err()
}

// HasKprobes reports whether the kernel can attach kprobes: through the
// kprobe PMU, or through tracefs.
func HasKprobes() bool {
	if _, err := os.Stat("/sys/bus/event_source/devices/kprobe"); err == nil {
		return true
	}
	dir, err := TracefsDir()
	if err != nil {
		return false
	}
	_, err = os.Stat(filepath.Join(dir, "kprobe_events"))
	return err == nil
}

// HasKprobeMulti reports whether the kernel attaches a program to many
// functions at once (kprobe.multi, Linux 5.18 with CONFIG_FPROBE), and
// lists them through ftrace, which kprobe.multi needs.
var HasKprobeMulti = sync.OnceValue(func() bool {
	if _, err := readTracefs("available_filter_functions"); err != nil {
		return false
	}
	return features.HaveBPFLinkKprobeMulti() == nil
})

// WhyNotTraceable explains, from what the kernel lists, why a kprobe on
// function fn was refused.
func WhyNotTraceable(fn string) string {
	if funcs, err := TraceableFunctions(); err == nil {
		for _, f := range funcs {
			if f == fn || strings.HasSuffix(f, ":"+fn) {
				return fmt.Sprintf("the kernel refused a kprobe on %s (at an offset off an instruction boundary?)", fn)
			}
		}
	}
	data, err := kallsymsFunctions()
	if err == nil && bytes.Contains(append([]byte("\n"), data...), []byte("\n"+fn+"\n")) {
		return fmt.Sprintf("%s can not be traced: it is not in available_filter_functions (inlined, or marked notrace)", fn)
	}
	return fmt.Sprintf("%s is not a function of this kernel (not in /proc/kallsyms)", fn)
}
