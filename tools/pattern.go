package tools

import (
	"fmt"
	"strings"
)

// The names of the arguments that are BCC probe patterns: a pattern is
// bound to one positional parameter, its attach point; a function to
// two, the attach points of its entry and of its return.
const (
	patternArgument  = "pattern"
	functionArgument = "function"
)

// AttachPoint translates a probe pattern of BCC's funccount, stackcount
// and funclatency into bpftrace's attach point, entry, and that of its
// return, ret, "" where it has none (a tracepoint, a USDT probe, a
// return probe):
//
//	vfs_*, p::vfs_*, p:vfs_read   kprobe:vfs_*        (return: kretprobe)
//	r:vfs_read, r::vfs_read       kretprobe:vfs_read
//	t:sched:sched_switch          tracepoint:sched:sched_switch
//	c:malloc, p:c:malloc          uprobe:libc:malloc  (return: uretprobe)
//	r:c:malloc                    uretprobe:libc:malloc
//	/path/lib.so:func, ./prog:f   uprobe:/path/lib.so:func, ...
//	u:pthread:probe               usdt:libpthread:probe
//
// A library named without a path is lib+name, as BCC and the linker
// read it. With regexp, the function (or event) is a regular
// expression, matched from its start as BCC does: bpftrace knows only
// the wildcard *, so anchors and .* translate and anything else is
// refused.
func AttachPoint(pattern string, regexp bool) (entry, ret string, err error) {
	kind, lib, fn, err := splitPattern(pattern)
	if err != nil {
		return "", "", err
	}
	if regexp {
		if fn, err = wildcard(fn); err != nil {
			return "", "", fmt.Errorf("pattern %q: %w", pattern, err)
		}
	}
	if fn == "" {
		return "", "", fmt.Errorf("pattern %q names no function", pattern)
	}
	if kind != "t" && lib != "" && !strings.Contains(lib, "/") && !strings.HasPrefix(lib, "lib") {
		lib = "lib" + lib
	}
	switch {
	case kind == "t":
		return "tracepoint:" + lib + ":" + fn, "", nil
	case kind == "u":
		return "usdt:" + lib + ":" + fn, "", nil
	case lib == "" && kind == "p":
		return "kprobe:" + fn, "kretprobe:" + fn, nil
	case lib == "":
		return "kretprobe:" + fn, "", nil
	case kind == "p":
		return "uprobe:" + lib + ":" + fn, "uretprobe:" + lib + ":" + fn, nil
	}
	return "uretprobe:" + lib + ":" + fn, "", nil
}

// splitPattern splits a pattern into its kind (p, r, t or u), library
// (or tracepoint category) and function (or event): [KIND:][LIB:]FUNC.
func splitPattern(pattern string) (kind, lib, fn string, err error) {
	parts := strings.Split(pattern, ":")
	kind = "p"
	if len(parts) > 1 && len(parts[0]) == 1 && strings.Contains("prtu", parts[0]) {
		kind, parts = parts[0], parts[1:]
	}
	switch len(parts) {
	case 1:
		fn = parts[0]
	case 2:
		lib, fn = parts[0], parts[1]
	default:
		return "", "", "", fmt.Errorf("pattern %q is none of [p:|r:][LIB:]FUNC, t:CATEGORY:EVENT or u:LIB:PROBE", pattern)
	}
	if (kind == "t" || kind == "u") && lib == "" {
		return "", "", "", fmt.Errorf("pattern %q: %s: takes two names, t:CATEGORY:EVENT or u:LIB:PROBE", pattern, kind)
	}
	return kind, lib, fn, nil
}

// wildcard translates a regular expression matched from the start of a
// name into a bpftrace wildcard: ^ and $ anchor it, .* is *, and the
// rest must be the letters, digits and _ of a name.
func wildcard(re string) (string, error) {
	w := strings.TrimPrefix(re, "^")
	anchored := strings.HasSuffix(w, "$")
	w = strings.ReplaceAll(strings.TrimSuffix(w, "$"), ".*", "*")
	for _, c := range w {
		if c != '*' && c != '_' && !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9') {
			return "", fmt.Errorf("regular expression %q: bpftrace attach points take only * wildcards, so only ^, $ and .* translate, not %q", re, c)
		}
	}
	if !anchored && !strings.HasSuffix(w, "*") {
		w += "*"
	}
	return w, nil
}
