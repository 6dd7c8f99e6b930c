package vmtest

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// Kernel is a Debian kernel, named by the metapackage that depends on its
// image package.
type Kernel struct {
	Name    string // a short name for test names: "6.1"
	Package string // the Debian metapackage
}

// The kernels the harness knows. Both are Debian 12's cloud kernels: small,
// with NVMe built in, BTF, kprobes and fentry.
var (
	Debian61  = Kernel{Name: "6.1", Package: "linux-image-cloud-amd64"}
	Debian612 = Kernel{Name: "6.12", Package: "linux-image-6.12-cloud-amd64"}
)

// Kernels lists every kernel, for tests that run on each.
var Kernels = []Kernel{Debian61, Debian612}

// cacheDir is where unpacked kernels are kept between runs.
func cacheDir() (string, error) {
	if dir := os.Getenv("GTRACE_VMTEST_CACHE"); dir != "" {
		return dir, nil
	}
	if dir := os.Getenv("XDG_CACHE_HOME"); dir != "" {
		return filepath.Join(dir, "gtrace-vmtest"), nil
	}
	if os.Geteuid() == 0 {
		return "/var/cache/gtrace-vmtest", nil
	}
	dir, err := os.UserCacheDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, "gtrace-vmtest"), nil
}

// Dir returns the directory holding k's unpacked image package (boot/,
// lib/modules/, ...), fetching and unpacking it on first use. A cached
// kernel is reused as it is, even when Debian has published a newer one:
// remove the directory to update it.
func (k Kernel) Dir() (string, error) {
	cache, err := cacheDir()
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(cache, 0o755); err != nil {
		return "", err
	}
	dir := filepath.Join(cache, k.Package)

	// Test processes of several packages may fetch at the same time.
	unlock, err := lock(dir + ".lock")
	if err != nil {
		return "", err
	}
	defer unlock()

	if _, err := os.Stat(dir); err == nil {
		return dir, nil
	}
	if err := k.fetch(cache, dir); err != nil {
		return "", fmt.Errorf("fetching kernel %s (%s): %w", k.Name, k.Package, err)
	}
	return dir, nil
}

// Vmlinuz returns the path of k's compressed kernel image.
func (k Kernel) Vmlinuz() (string, error) {
	dir, err := k.Dir()
	if err != nil {
		return "", err
	}
	images, _ := filepath.Glob(filepath.Join(dir, "boot", "vmlinuz-*"))
	if len(images) != 1 {
		return "", fmt.Errorf("want one boot/vmlinuz-* in %s, found %d", dir, len(images))
	}
	return images[0], nil
}

// fetch downloads k's metapackage, then the image package it depends on,
// and unpacks that into dir. The work happens in a temporary directory
// renamed to dir at the end, so dir is either complete or absent.
func (k Kernel) fetch(cache, dir string) error {
	tmp, err := os.MkdirTemp(cache, k.Package+".tmp-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)

	meta, err := download(tmp, k.Package)
	if err != nil {
		return err
	}
	depends, err := command(tmp, "dpkg-deb", "-f", meta, "Depends")
	if err != nil {
		return err
	}
	image := imagePackage(depends)
	if image == "" {
		return fmt.Errorf("%s depends on no linux-image package: %q", k.Package, depends)
	}
	deb, err := download(tmp, image)
	if err != nil {
		return err
	}
	root := filepath.Join(tmp, "root")
	if _, err := command(tmp, "dpkg-deb", "-x", deb, root); err != nil {
		return err
	}
	return os.Rename(root, dir)
}

// imagePackage picks the linux-image package out of a Depends field such
// as "linux-image-6.1.0-56-cloud-amd64 (= 6.1.192-2)".
func imagePackage(depends string) string {
	for _, dep := range strings.Split(depends, ",") {
		fields := strings.Fields(dep)
		if len(fields) > 0 && strings.HasPrefix(fields[0], "linux-image-") {
			return fields[0]
		}
	}
	return ""
}

// download fetches one package's .deb into dir with apt-get download and
// returns its path. When apt does not know the package, it updates the
// package lists (root only) and tries once more.
func download(dir, pkg string) (string, error) {
	_, err := command(dir, "apt-get", "download", "-q", pkg)
	if err != nil && os.Geteuid() == 0 {
		if _, uerr := command(dir, "apt-get", "update", "-q"); uerr != nil {
			return "", uerr
		}
		_, err = command(dir, "apt-get", "download", "-q", pkg)
	}
	if err != nil {
		return "", err
	}
	debs, _ := filepath.Glob(filepath.Join(dir, pkg+"_*.deb"))
	if len(debs) != 1 {
		return "", fmt.Errorf("apt-get download %s: want one .deb, found %d", pkg, len(debs))
	}
	return debs[0], nil
}

// command runs name in dir and returns its trimmed stdout; its error
// carries stderr.
func command(dir, name string, args ...string) (string, error) {
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("%s %s: %v: %s", name, strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return strings.TrimSpace(stdout.String()), nil
}

// lock takes an exclusive lock on the file name, shared with other
// processes, and returns the function that releases it.
func lock(name string) (unlock func(), err error) {
	f, err := os.Create(name)
	if err != nil {
		return nil, err
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX); err != nil {
		f.Close()
		return nil, err
	}
	return func() { f.Close() }, nil
}
