package vmtest

import (
	"strings"
	"testing"
)

func TestModuleName(t *testing.T) {
	for file, want := range map[string]string{
		"dummy.ko":     "dummy",
		"dm-mod.ko.xz": "dm_mod",
		"nls_cp437.ko": "nls_cp437",
	} {
		if got, ok := moduleName(file); !ok || got != want {
			t.Errorf("moduleName(%q) = %q, %v; want %q", file, got, ok, want)
		}
	}
	if _, ok := moduleName("modules.order"); ok {
		t.Error(`moduleName("modules.order") is a module`)
	}
}

// TestModuleFiles finds modules in both kernels' packages and checks
// dependencies where the modules are uncompressed (6.1).
func TestModuleFiles(t *testing.T) {
	for _, k := range Kernels {
		t.Run(k.Name, func(t *testing.T) {
			requireKernel(t, k)
			dir, err := k.Dir()
			if err != nil {
				t.Fatal(err)
			}
			files, guest, err := moduleFiles(dir, []string{"dummy"})
			if err != nil {
				t.Fatal(err)
			}
			if len(guest) != 1 || !strings.HasPrefix(guest[0], "/lib/modules/dummy.ko") || files[guest[0]] == "" {
				t.Errorf("got files %v, load order %v", files, guest)
			}
			if _, _, err := moduleFiles(dir, []string{"no_such_module"}); err == nil {
				t.Error("no error for a missing module")
			}
			if k == Debian61 {
				// vxlan depends on udp_tunnel and ip6_udp_tunnel.
				if _, _, err := moduleFiles(dir, []string{"vxlan"}); err == nil || !strings.Contains(err.Error(), "list it first") {
					t.Errorf("vxlan without its dependencies: err = %v", err)
				}
			}
		})
	}
}

func TestInsmodScript(t *testing.T) {
	got := insmodScript([]string{"/lib/modules/a.ko", "/lib/modules/b.ko.xz"})
	for _, want := range []string{
		"\tinsmod '/lib/modules/a.ko' ||",
		"\txzcat '/lib/modules/b.ko.xz' >'/run/b.ko' ||",
		"\tinsmod '/run/b.ko' ||",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("insmodScript lacks %q:\n%s", want, got)
		}
	}
	if insmodScript(nil) != "" {
		t.Error("a script for no modules")
	}
}

// TestModules loads a module in a guest of each kernel and creates a
// device of its driver.
func TestModules(t *testing.T) {
	for _, k := range Kernels {
		t.Run(k.Name, func(t *testing.T) {
			res := Run(t, Config{Kernel: k, Modules: []string{"dummy"}},
				"sh", "-c", "grep -w '^dummy' /proc/modules | cut -d' ' -f1; ip link add d0 type dummy && cat /sys/class/net/d0/type")
			if res.Stdout != "dummy\n1\n" || res.ExitCode != 0 {
				t.Errorf("got stdout %q, stderr %q, exit %d", res.Stdout, res.Stderr, res.ExitCode)
			}
		})
	}
}
