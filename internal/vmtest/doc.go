// Package vmtest runs commands under Debian's stock kernels in qemu, for
// the tests that need what the host kernel lacks: kprobes, fentry,
// kprobe.multi, and real block devices such as a zoned NVMe namespace.
//
// A boot takes the kernel image from Debian's packages (fetched once with
// apt-get download and unpacked with dpkg-deb into a cache directory
// outside the repository), builds an initramfs at test time from
// busybox-static and the files the test asks for, and boots it with
// qemu-system-x86_64. The init script mounts proc, sysfs, devtmpfs,
// debugfs, tracefs and bpffs, runs one command, prints its stdout, stderr
// and exit status between markers on the serial console, and powers off.
//
//	res := vmtest.Run(t, vmtest.Config{
//		Kernel: vmtest.Debian61,
//		Files:  map[string]string{"/gtrace": vmtest.BuildGtrace(t)},
//	}, "/gtrace", "-e", "kprobe:vfs_read { @ = count(); exit(); }")
//
// InVM runs the calling Go test itself inside the VM instead.
//
// Boots run under TCG (software emulation) unless KVM works: nested KVM
// hangs on some hosts, so it is tried once per process with a short
// timeout. Tests skip when qemu, busybox-static or the kernel packages are
// missing, and fail instead under CI=true.
//
// Environment:
//
//	GTRACE_VMTEST_CACHE  the kernel cache (default $XDG_CACHE_HOME/gtrace-vmtest,
//	                     or /var/cache/gtrace-vmtest for root)
//	GTRACE_VMTEST_ACCEL  "tcg" or "kvm": skip the KVM check
package vmtest
