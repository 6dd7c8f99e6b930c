package codegen_test

import (
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/cilium/ebpf"

	"gtrace/codegen"
	"gtrace/internal/testutils"
	"gtrace/internal/vmtest"
	"gtrace/sema"
)

// allSamples lists every sample script: of the builtins, the functions,
// the probe kinds and the expressions.
func allSamples() []string {
	var srcs []string
	for _, samples := range []map[string][]string{builtinSamples, funcSamples} {
		for _, name := range slices.Sorted(maps.Keys(samples)) {
			srcs = append(srcs, samples[name]...)
		}
	}
	for _, pk := range probeKinds {
		srcs = append(srcs, probeSample(pk.attach))
	}
	return append(srcs, exprSamples...)
}

// inKernel reports whether src's probe is on a kernel function: a
// kprobe, kretprobe, fentry or fexit, which this machine's kernel can
// not attach or load (see TestVerifierVM).
func inKernel(src string) bool {
	for _, prefix := range []string{"kprobe:", "kretprobe:", "fentry:", "fexit:"} {
		if strings.HasPrefix(src, prefix) {
			return true
		}
	}
	return false
}

// load creates out's maps and loads each of its programs through the
// verifier, as the runtime does.
func load(t *testing.T, out *codegen.Output) {
	t.Helper()
	coll, err := ebpf.NewCollection(&ebpf.CollectionSpec{Maps: out.Spec.Maps})
	if err != nil {
		t.Fatalf("create maps: %v", err)
	}
	defer coll.Close()
	for _, name := range slices.Sorted(maps.Keys(out.Spec.Programs)) {
		spec := out.Spec.Programs[name].Copy()
		refs := spec.Instructions.ReferenceOffsets()
		for mapName, m := range coll.Maps {
			if len(refs[mapName]) == 0 {
				continue
			}
			if err := spec.Instructions.AssociateMap(mapName, m); err != nil {
				t.Fatalf("%s: associate map %s: %v", name, mapName, err)
			}
		}
		prog, err := ebpf.NewProgram(spec)
		if err != nil {
			t.Errorf("%s (%v): %v", name, spec.Type, err)
			continue
		}
		prog.Close()
	}
}

// TestVerifier loads every sample's programs on this machine's kernel,
// but for those on kernel functions, which TestVerifierVM loads. The
// probe kinds are loaded once more with a -p filter.
func TestVerifier(t *testing.T) {
	testutils.RequireRoot(t)
	for _, src := range allSamples() {
		if inKernel(src) {
			continue
		}
		t.Run(src, func(t *testing.T) {
			if out := compile(t, src, nil); out != nil {
				load(t, out)
			}
		})
	}
	for _, pk := range probeKinds {
		if src := probeSample(pk.attach); !inKernel(src) {
			t.Run("pid/"+pk.name, func(t *testing.T) {
				load(t, compile(t, src, &codegen.Options{NumCPU: 2, Pid: 1}))
			})
		}
	}
}

// wildcardSamples attach to every function of a wildcard: one
// multi-kprobe where the kernel has kprobe.multi (6.12), a program per
// function elsewhere. They need the kernel's list of functions.
var wildcardSamples = []string{
	`kprobe:vfs_rea* { @[func, probe] = count(); }`,
	`fentry:vfs_rea* { @[func] = count(); }`,
}

// guestsRefuse are samples whose helpers the guests' kernels lack:
// Debian builds them without CONFIG_BPF_KPROBE_OVERRIDE, for
// bpf_override_return (TestVMStdlib checks the error).
var guestsRefuse = map[string]bool{
	`kprobe:vfs_read { override(-22); }`:              true,
	`kprobe:vfs_read /arg2 > 10/ { override(arg2); }`: true,
}

// TestVerifierVM loads the samples on kernel functions in a guest of
// each kernel, which has kprobes and fentry. There they are checked
// against the guest's own kernel, whose BTF fentry programs are bound
// to when loaded: the samples name only what the real vfs_read has.
func TestVerifierVM(t *testing.T) {
	for _, k := range vmtest.Kernels {
		t.Run(k.Name, func(t *testing.T) {
			if !vmtest.InVM(t, vmtest.Config{Kernel: k}) {
				return
			}
			cfg := sema.DefaultConfig()
			cfg.Unsafe = true
			for _, src := range append(allSamples(), wildcardSamples...) {
				if !inKernel(src) || guestsRefuse[src] {
					continue
				}
				t.Run(src, func(t *testing.T) {
					info, f := check(t, src, &sema.Options{Config: cfg})
					out, err := codegen.Compile(info, &codegen.Options{NumCPU: 2, File: f})
					if err != nil {
						if _, known := knownGaps[src]; !known {
							t.Errorf("compile: %v", err)
						}
						return
					}
					load(t, out)
				})
			}
		})
	}
}
