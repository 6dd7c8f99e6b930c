package vmtest

import (
	"bufio"
	"debug/elf"
	"fmt"
	"io"
	"os"
	"path"
	"regexp"
	"sort"
	"strings"
)

// busybox is the statically linked busybox from Debian's busybox-static.
const busybox = "/bin/busybox"

// initramfs writes an uncompressed newc cpio archive to out holding the
// init script, busybox and files (guest path to host path).
func initramfs(out, script string, files map[string]string) error {
	all := map[string]string{"/bin/busybox": busybox}
	for guest, host := range files {
		if !path.IsAbs(guest) || path.Clean(guest) != guest || guest == "/init" {
			return fmt.Errorf("guest path %q: want a clean absolute path other than /init", guest)
		}
		all[guest] = host
	}

	dirs := map[string]bool{"/bin": true, "/dev": true, "/proc": true, "/run": true, "/sys": true, "/tmp": true}
	for guest := range all {
		for d := path.Dir(guest); d != "/"; d = path.Dir(d) {
			dirs[d] = true
		}
	}

	f, err := os.Create(out)
	if err != nil {
		return err
	}
	defer f.Close()
	w := &cpioWriter{w: bufio.NewWriter(f)}

	// Sorted, so that every directory comes before what it holds.
	for _, d := range sortedKeys(dirs) {
		w.entry(d, 0o040755, 0, nil)
	}
	w.entry("/init", 0o100755, int64(len(script)), strings.NewReader(script))
	for _, guest := range sortedKeys(all) {
		if err := w.file(guest, all[guest]); err != nil {
			return err
		}
	}
	w.entry("TRAILER!!!", 0, 0, nil)
	if w.err != nil {
		return w.err
	}
	if err := w.w.Flush(); err != nil {
		return err
	}
	return f.Close()
}

// cpioWriter writes the "newc" cpio format that the kernel unpacks into
// its root file system. The first error sticks in err.
type cpioWriter struct {
	w   *bufio.Writer
	ino int
	n   int64 // bytes written, for the 4-byte alignment
	err error
}

// file copies a regular host file into the archive as name, with its
// permission bits.
func (c *cpioWriter) file(name, host string) error {
	f, err := os.Open(host)
	if err != nil {
		return err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return err
	}
	if !st.Mode().IsRegular() {
		return fmt.Errorf("%s: not a regular file", host)
	}
	c.entry(name, 0o100000|uint32(st.Mode().Perm()), st.Size(), f)
	return c.err
}

// entry writes one header, its name and size bytes of data.
func (c *cpioWriter) entry(name string, mode uint32, size int64, data io.Reader) {
	if c.err != nil {
		return
	}
	name = strings.TrimPrefix(name, "/")
	c.ino++
	nlink := 1
	if mode&0o040000 != 0 {
		nlink = 2
	}
	// magic, ino, mode, uid, gid, nlink, mtime, filesize, devmajor,
	// devminor, rdevmajor, rdevminor, namesize, check.
	c.write(fmt.Sprintf("070701%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X",
		c.ino, mode, 0, 0, nlink, 0, size, 0, 0, 0, 0, len(name)+1, 0))
	c.write(name + "\x00")
	c.pad()
	if data != nil {
		n, err := io.CopyN(c.w, data, size)
		c.n += n
		if err != nil {
			c.err = fmt.Errorf("writing %s into the initramfs: %w", name, err)
		}
	}
	c.pad()
}

func (c *cpioWriter) write(s string) {
	if c.err != nil {
		return
	}
	n, err := c.w.WriteString(s)
	c.n += int64(n)
	c.err = err
}

func (c *cpioWriter) pad() {
	if r := c.n % 4; r != 0 {
		c.write(strings.Repeat("\x00", int(4-r)))
	}
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// checkStatic returns an error unless the file at host is a statically
// linked executable: the initramfs holds no shared libraries.
func checkStatic(host string) error {
	f, err := elf.Open(host)
	if err != nil {
		return nil // not ELF: a script or data file
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			return fmt.Errorf("%s is dynamically linked; build it with CGO_ENABLED=0", host)
		}
	}
	return nil
}

// envName is what the init script accepts as an environment variable name.
var envName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// initScript is the VM's /init: it mounts the file systems, runs argv with
// env under a time limit of limit seconds, prints stdout, stderr and the
// exit status between lines marked with nonce, and powers off. With nvme,
// it first makes sure of the NVMe namespaces' names (see nvmeNames); with
// modules (guest paths), it loads them before the command (see
// insmodScript).
//
// The output goes to the files /run/stdout and /run/stderr first, so that
// kernel messages cannot interleave with it, and printk is quietened
// before it is printed. stty -onlcr keeps the tty from turning "\n" into
// "\r\n", so the bytes arrive as the command wrote them.
func initScript(nonce string, env map[string]string, argv []string, limit int, nvme bool, modules []string) (string, error) {
	var b strings.Builder
	b.WriteString(`#!/bin/busybox sh
/bin/busybox --install -s /bin
export PATH=/bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mount -t debugfs debugfs /sys/kernel/debug
mount -t tracefs tracefs /sys/kernel/tracing
mount -t bpf bpf /sys/fs/bpf
ulimit -l unlimited
export GTRACE_VMTEST=1
`)
	// The kernel got as far as running init: a boot that fails before
	// this line is the kernel's, not the command's.
	fmt.Fprintf(&b, "echo '%s started@@'\n", marker(nonce))
	if nvme {
		b.WriteString(nvmeNames)
	}
	for _, k := range sortedKeys(env) {
		if !envName.MatchString(k) {
			return "", fmt.Errorf("environment variable name %q", k)
		}
		fmt.Fprintf(&b, "export %s=%s\n", k, shellQuote(env[k]))
	}
	if len(modules) > 0 {
		b.WriteString(insmodScript(modules))
		b.WriteString(": >/run/stdout\nstatus=125\nif modules_loaded >/run/stderr 2>&1; then\n")
	}
	fmt.Fprintf(&b, "cd /\ntimeout %d", limit)
	for _, arg := range argv {
		b.WriteString(" " + shellQuote(arg))
	}
	b.WriteString(" </dev/null >/run/stdout 2>/run/stderr\nstatus=$?\n")
	if len(modules) > 0 {
		b.WriteString("fi\n")
	}
	fmt.Fprintf(&b, `echo 1 >/proc/sys/kernel/printk
stty -onlcr
echo
echo '%[1]s stdout@@'
cat /run/stdout
echo
echo '%[1]s stderr@@'
cat /run/stderr
echo
echo "%[1]s exit $status@@"
poweroff -f
`, marker(nonce))
	return b.String(), nil
}

// nvmeNames is the part of the init script that gets the NVMe namespaces
// their names by namespace ID: nvme0n1 for namespace 1, nvme0n2 for
// namespace 2. Linux 6.12 scans namespaces in parallel and names them in
// the order the scans finish, so namespace 2 is sometimes nvme0n1. Then
// the controller is removed and found again, which takes half a second,
// until the names are right; after 10 tries the test sees the wrong names.
const nvmeNames = `nvme_named() {
	[ "$(cat /sys/block/nvme0n1/nsid 2>/dev/null)" = 1 ] &&
		[ "$(cat /sys/block/nvme0n2/nsid 2>/dev/null)" = 2 ]
}
tries=0
until nvme_named || [ $tries -ge 10 ]; do
	tries=$((tries + 1))
	echo 1 >/sys/class/nvme/nvme0/device/remove
	echo 1 >/sys/bus/pci/rescan
	i=0
	while [ ! -e /sys/block/nvme0n2 ] && [ $i -lt 50 ]; do
		sleep 0.1
		i=$((i + 1))
	done
done
[ $tries -eq 0 ] || echo "vmtest: probed the NVMe controller $tries more times to name its namespaces"
`

// marker starts every marker line of a boot.
func marker(nonce string) string {
	return "@@vmtest " + nonce
}

func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
