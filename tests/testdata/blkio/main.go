// Command blkio issues the block I/O that tests/vm/vm_storage_test.go and
// vm_blockio_test.go trace in a vmtest guest, whose busybox has no tool
// for these ioctls. The tests build it with CGO_ENABLED=0, so that it runs
// in the guest's initramfs.
//
//	blkio read DEV SIZE SECTOR...     a direct (O_DIRECT) read of SIZE bytes
//	                                  at each 512-byte SECTOR of DEV
//	blkio write DEV SIZE SECTOR...    a direct write of SIZE bytes of zeros
//	                                  at each SECTOR of DEV
//	blkio reset DEV SECTOR...         reset the zone starting at each SECTOR
//	                                  with the BLKRESETZONE ioctl
//	blkio nvme-reset DEV SECTOR...    reset the same through NVMe passthrough:
//	                                  a Zone Management Send command with
//	                                  the Reset action, by NVME_IOCTL_IO_CMD
//	                                  on the namespace's device DEV
//	blkio read-on-signal FILE         open FILE, print "ready", wait for
//	                                  SIGUSR1, read FILE to its end in
//	                                  reads of 4096 bytes, print "read N"
//	                                  and exit at the next SIGUSR1
//
// Sectors are 512 bytes, the namespaces' logical block size, so a sector
// number is also the NVMe LBA.
package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"unsafe"

	"golang.org/x/sys/unix"
)

// ioctl request numbers from linux/blkzoned.h and linux/nvme_ioctl.h.
const (
	blkResetZone  = 0x40101283 // _IOW(0x12, 131, struct blk_zone_range)
	blkGetZoneSz  = 0x80041284 // _IOR(0x12, 132, __u32)
	nvmeIoctlID   = 0x4e40     // _IO('N', 0x40)
	nvmeIoctlIO   = 0xc0484e43 // _IOWR('N', 0x43, struct nvme_passthru_cmd)
	zoneMgmtSend  = 0x79       // NVMe I/O command opcode
	zoneActReset  = 0x04       // Zone Send Action: Reset Zone
	directIOAlign = 4096
)

// blkZoneRange is struct blk_zone_range.
type blkZoneRange struct {
	Sector, NrSectors uint64
}

// nvmePassthruCmd is struct nvme_passthru_cmd.
type nvmePassthruCmd struct {
	Opcode      uint8
	Flags       uint8
	Rsvd1       uint16
	NSID        uint32
	Cdw2, Cdw3  uint32
	Metadata    uint64
	Addr        uint64
	MetadataLen uint32
	DataLen     uint32
	Cdw10       uint32
	Cdw11       uint32
	Cdw12       uint32
	Cdw13       uint32
	Cdw14       uint32
	Cdw15       uint32
	TimeoutMs   uint32
	Result      uint32
}

func main() {
	if len(os.Args) < 3 {
		fail(errors.New("usage: blkio read|write|reset|nvme-reset|read-on-signal ARGS..."))
	}
	cmd, args := os.Args[1], os.Args[2:]
	var err error
	switch cmd {
	case "read":
		err = directIO(args, false)
	case "write":
		err = directIO(args, true)
	case "reset":
		err = reset(args[0], sectors(args[1:]))
	case "nvme-reset":
		err = nvmeReset(args[0], sectors(args[1:]))
	case "read-on-signal":
		err = readOnSignal(args[0])
	default:
		err = fmt.Errorf("unknown command %q", cmd)
	}
	if err != nil {
		fail(err)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "blkio:", err)
	os.Exit(1)
}

// sectors parses sector numbers, exiting on a bad one.
func sectors(args []string) []uint64 {
	var s []uint64
	for _, a := range args {
		n, err := strconv.ParseUint(a, 0, 64)
		if err != nil {
			fail(err)
		}
		s = append(s, n)
	}
	return s
}

// directIO reads, or writes, args[1] bytes at each sector args[2:] of
// device args[0], bypassing the page cache: one request each.
func directIO(args []string, write bool) error {
	if len(args) < 3 {
		return errors.New("read|write DEV SIZE SECTOR...")
	}
	size, err := strconv.Atoi(args[1])
	if err != nil || size <= 0 || size%directIOAlign != 0 {
		return fmt.Errorf("size %q: want a multiple of %d", args[1], directIOAlign)
	}
	flags, op := unix.O_RDONLY, "reading"
	if write {
		flags, op = unix.O_WRONLY, "writing"
	}
	fd, err := unix.Open(args[0], flags|unix.O_DIRECT, 0)
	if err != nil {
		return fmt.Errorf("%s: %w", args[0], err)
	}
	defer unix.Close(fd)
	buf := alignedBuffer(size)
	for _, sector := range sectors(args[2:]) {
		var n int
		if write {
			n, err = unix.Pwrite(fd, buf, int64(sector)*512)
		} else {
			n, err = unix.Pread(fd, buf, int64(sector)*512)
		}
		if err != nil || n != size {
			return fmt.Errorf("%s %d bytes at sector %d: %d, %v", op, size, sector, n, err)
		}
	}
	return nil
}

// alignedBuffer returns size bytes aligned for direct I/O.
func alignedBuffer(size int) []byte {
	buf := make([]byte, size+directIOAlign)
	off := int(uintptr(unsafe.Pointer(&buf[0])) % directIOAlign)
	if off != 0 {
		off = directIOAlign - off
	}
	return buf[off : off+size]
}

// reset resets each zone starting at one of sectors through the block
// layer (REQ_OP_ZONE_RESET).
func reset(dev string, sectors []uint64) error {
	fd, err := unix.Open(dev, unix.O_WRONLY, 0)
	if err != nil {
		return fmt.Errorf("%s: %w", dev, err)
	}
	defer unix.Close(fd)
	var zoneSize uint32
	if err := ioctl(fd, blkGetZoneSz, unsafe.Pointer(&zoneSize)); err != nil || zoneSize == 0 {
		return fmt.Errorf("%s: BLKGETZONESZ: %d, %v", dev, zoneSize, err)
	}
	for _, s := range sectors {
		r := blkZoneRange{Sector: s, NrSectors: uint64(zoneSize)}
		if err := ioctl(fd, blkResetZone, unsafe.Pointer(&r)); err != nil {
			return fmt.Errorf("%s: BLKRESETZONE at sector %d: %w", dev, s, err)
		}
	}
	return nil
}

// nvmeReset resets each zone starting at one of sectors with an NVMe
// command of its own (a REQ_OP_DRV_OUT request to the driver).
func nvmeReset(dev string, sectors []uint64) error {
	fd, err := unix.Open(dev, unix.O_RDWR, 0)
	if err != nil {
		return fmt.Errorf("%s: %w", dev, err)
	}
	defer unix.Close(fd)
	nsid, _, errno := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), nvmeIoctlID, 0)
	if errno != 0 {
		return fmt.Errorf("%s: NVME_IOCTL_ID: %w", dev, errno)
	}
	for _, s := range sectors {
		cmd := nvmePassthruCmd{
			Opcode: zoneMgmtSend,
			NSID:   uint32(nsid),
			Cdw10:  uint32(s),
			Cdw11:  uint32(s >> 32),
			Cdw13:  zoneActReset,
		}
		// A positive return value is the command's NVMe status.
		status, _, errno := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), nvmeIoctlIO, uintptr(unsafe.Pointer(&cmd)))
		if errno != 0 || status != 0 {
			return fmt.Errorf("%s: zone reset at LBA %d: status %#x, %v", dev, s, status, errno)
		}
	}
	return nil
}

func ioctl(fd int, req uintptr, arg unsafe.Pointer) error {
	if _, _, errno := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), req, uintptr(arg)); errno != 0 {
		return errno
	}
	return nil
}

// readOnSignal opens name, says it is ready and reads the file when
// SIGUSR1 comes, so that a tracer started in between sees the reads and
// nothing else: no exec, no open, no lookup of the path. It prints the
// number of bytes read, and exits at the next SIGUSR1: exiting unmaps the
// program's pages, which a tracer of page-cache accesses counts too.
// Print to a pipe: writing a file is a page-cache access.
func readOnSignal(name string) error {
	f, err := os.Open(name)
	if err != nil {
		return err
	}
	defer f.Close()
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, unix.SIGUSR1)
	fmt.Println("ready")
	<-sig
	buf := make([]byte, 4096)
	total := 0
	for {
		n, err := f.Read(buf)
		total += n
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
	}
	fmt.Println("read", total)
	<-sig
	return nil
}
