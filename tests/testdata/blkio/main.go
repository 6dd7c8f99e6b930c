// Command blkio issues the I/O that tests/vm/vm_storage_test.go,
// vm_biotools_test.go, vm_blockio_test.go, vm_nvme_test.go and
// vm_cache_test.go trace in a vmtest guest, whose busybox has no tool for
// these ioctls or for I/O that waits for a signal. The tests build it with
// CGO_ENABLED=0, so that it runs in the guest's initramfs.
//
//	blkio read DEV SIZE SECTOR...     a direct (O_DIRECT) read of SIZE bytes
//	                                  at each 512-byte SECTOR of DEV
//	blkio write DEV SIZE SECTOR...    a direct write of SIZE bytes, the same
//	blkio reset DEV SECTOR...         reset the zone starting at each SECTOR
//	                                  with the BLKRESETZONE ioctl
//	blkio reset-all DEV               reset every zone of DEV at once, with
//	                                  BLKRESETZONE over the whole device
//	blkio nvme-reset DEV SECTOR...    reset the same through NVMe passthrough:
//	                                  a Zone Management Send command with
//	                                  the Reset action, by NVME_IOCTL_IO_CMD
//	                                  on the namespace's device DEV
//	blkio nvme-append DEV SIZE SECTOR...
//	                                  a Zone Append of SIZE bytes to the zone
//	                                  starting at each SECTOR, by NVMe
//	                                  passthrough as nvme-reset
//	blkio nvme-identify DEV           an admin Identify Controller command,
//	                                  by NVME_IOCTL_ADMIN_CMD on the
//	                                  controller's device DEV
//	blkio read-on-signal FILE         open FILE, print "ready", wait for
//	                                  SIGUSR1, read FILE to its end in
//	                                  reads of 4096 bytes, print "read N"
//	                                  and exit at the next SIGUSR1
//	blkio dm-delay NAME DEV SECTOR N MS
//	                                  create the device-mapper device NAME:
//	                                  DEV, but reads and writes of its N
//	                                  sectors at SECTOR wait MS ms first
//	                                  (dm-delay), for an I/O of known slowness
//	blkio write-on-signal FILE PAGES  the same for a buffered write of
//	                                  PAGES pages of 4096 bytes over the
//	                                  start of FILE: "wrote N"
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
	"runtime"
	"strconv"
	"unsafe"

	"golang.org/x/sys/unix"
)

// ioctl request numbers from linux/blkzoned.h and linux/nvme_ioctl.h.
const (
	blkResetZone  = 0x40101283 // _IOW(0x12, 131, struct blk_zone_range)
	blkGetZoneSz  = 0x80041284 // _IOR(0x12, 132, __u32)
	blkGetSize64  = 0x80081272 // _IOR(0x12, 114, size_t)
	nvmeIoctlID   = 0x4e40     // _IO('N', 0x40)
	nvmeIoctlIO   = 0xc0484e43 // _IOWR('N', 0x43, struct nvme_passthru_cmd)
	nvmeIoctlAdm  = 0xc0484e41 // _IOWR('N', 0x41, struct nvme_admin_cmd)
	identify      = 0x06       // NVMe admin command opcode
	cnsController = 0x01       // Identify: the controller's data structure
	zoneMgmtSend  = 0x79       // NVMe I/O command opcodes
	zoneAppend    = 0x7d
	zoneActReset  = 0x04 // Zone Send Action: Reset Zone
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
		fail(errors.New("usage: blkio read|write|reset|reset-all|nvme-reset|nvme-append|nvme-identify|read-on-signal|write-on-signal|dm-delay ARGS..."))
	}
	cmd, args := os.Args[1], os.Args[2:]
	var err error
	switch cmd {
	case "read":
		err = readWrite(args, false)
	case "write":
		err = readWrite(args, true)
	case "reset":
		err = reset(args[0], sectors(args[1:]))
	case "reset-all":
		err = resetAll(args[0])
	case "nvme-reset":
		err = nvmeReset(args[0], sectors(args[1:]))
	case "nvme-append":
		err = nvmeAppend(args)
	case "nvme-identify":
		err = nvmeIdentify(args[0])
	case "read-on-signal":
		err = readOnSignal(args[0])
	case "dm-delay":
		err = dmDelay(args)
	case "write-on-signal":
		err = writeOnSignal(args)
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

// readWrite reads, or writes, args[1] bytes at each sector args[2:] of
// device args[0], bypassing the page cache.
func readWrite(args []string, write bool) error {
	if len(args) < 3 {
		return errors.New("read|write DEV SIZE SECTOR...")
	}
	size, err := ioSize(args[1])
	if err != nil {
		return err
	}
	flags, rw := unix.O_RDONLY, unix.Pread
	if write {
		flags, rw = unix.O_WRONLY, unix.Pwrite
	}
	fd, err := unix.Open(args[0], flags|unix.O_DIRECT, 0)
	if err != nil {
		return fmt.Errorf("%s: %w", args[0], err)
	}
	defer unix.Close(fd)
	buf := alignedBuffer(size)
	for _, sector := range sectors(args[2:]) {
		n, err := rw(fd, buf, int64(sector)*512)
		if err != nil || n != size {
			return fmt.Errorf("%d bytes at sector %d: %d, %v", size, sector, n, err)
		}
	}
	return nil
}

// ioSize parses a size of direct I/O.
func ioSize(s string) (int, error) {
	size, err := strconv.Atoi(s)
	if err != nil || size <= 0 || size%directIOAlign != 0 {
		return 0, fmt.Errorf("size %q: want a multiple of %d", s, directIOAlign)
	}
	return size, nil
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

// resetAll resets every zone of dev with one BLKRESETZONE over the whole
// device, which the block layer sends as one REQ_OP_ZONE_RESET_ALL.
func resetAll(dev string) error {
	fd, err := unix.Open(dev, unix.O_WRONLY, 0)
	if err != nil {
		return fmt.Errorf("%s: %w", dev, err)
	}
	defer unix.Close(fd)
	var size uint64
	if err := ioctl(fd, blkGetSize64, unsafe.Pointer(&size)); err != nil {
		return fmt.Errorf("%s: BLKGETSIZE64: %w", dev, err)
	}
	r := blkZoneRange{Sector: 0, NrSectors: size / 512}
	if err := ioctl(fd, blkResetZone, unsafe.Pointer(&r)); err != nil {
		return fmt.Errorf("%s: BLKRESETZONE of all zones: %w", dev, err)
	}
	return nil
}

// nvmeReset resets each zone starting at one of sectors with an NVMe
// command of its own (a REQ_OP_DRV_OUT request to the driver).
func nvmeReset(dev string, sectors []uint64) error {
	var cmds []nvmePassthruCmd
	for _, s := range sectors {
		cmds = append(cmds, nvmePassthruCmd{
			Opcode: zoneMgmtSend,
			Cdw10:  uint32(s),
			Cdw11:  uint32(s >> 32),
			Cdw13:  zoneActReset,
		})
	}
	return nvmeIO(dev, cmds)
}

// nvmeAppend appends args[1] bytes to each zone starting at one of the
// sectors args[2:] of the namespace's device args[0], with an NVMe
// command of its own: the block layer has no zone append for programs.
func nvmeAppend(args []string) error {
	if len(args) < 3 {
		return errors.New("nvme-append DEV SIZE SECTOR...")
	}
	size, err := ioSize(args[1])
	if err != nil {
		return err
	}
	buf := alignedBuffer(size)
	var cmds []nvmePassthruCmd
	for _, s := range sectors(args[2:]) {
		cmds = append(cmds, nvmePassthruCmd{
			Opcode:  zoneAppend,
			Addr:    uint64(uintptr(unsafe.Pointer(&buf[0]))),
			DataLen: uint32(size),
			Cdw10:   uint32(s),
			Cdw11:   uint32(s >> 32),
			Cdw12:   uint32(size/512 - 1), // blocks, 0-based
		})
	}
	err = nvmeIO(args[0], cmds)
	runtime.KeepAlive(buf) // the commands hold its address only
	return err
}

// nvmeIO sends each of cmds by NVME_IOCTL_IO_CMD to the namespace's
// device dev, with the namespace's ID.
func nvmeIO(dev string, cmds []nvmePassthruCmd) error {
	fd, err := unix.Open(dev, unix.O_RDWR, 0)
	if err != nil {
		return fmt.Errorf("%s: %w", dev, err)
	}
	defer unix.Close(fd)
	nsid, _, errno := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), nvmeIoctlID, 0)
	if errno != 0 {
		return fmt.Errorf("%s: NVME_IOCTL_ID: %w", dev, errno)
	}
	for _, cmd := range cmds {
		cmd.NSID = uint32(nsid)
		// A positive return value is the command's NVMe status.
		status, _, errno := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), nvmeIoctlIO, uintptr(unsafe.Pointer(&cmd)))
		if errno != 0 || status != 0 {
			return fmt.Errorf("%s: command %#x at LBA %d: status %#x, %v", dev, cmd.Opcode, uint64(cmd.Cdw11)<<32|uint64(cmd.Cdw10), status, errno)
		}
	}
	return nil
}

// nvmeIdentify reads the controller's Identify data with an admin
// command of its own, sent on the controller's admin queue.
func nvmeIdentify(dev string) error {
	fd, err := unix.Open(dev, unix.O_RDWR, 0)
	if err != nil {
		return fmt.Errorf("%s: %w", dev, err)
	}
	defer unix.Close(fd)
	buf := alignedBuffer(4096)
	cmd := nvmePassthruCmd{
		Opcode:  identify,
		Addr:    uint64(uintptr(unsafe.Pointer(&buf[0]))),
		DataLen: uint32(len(buf)),
		Cdw10:   cnsController,
	}
	status, _, errno := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), nvmeIoctlAdm, uintptr(unsafe.Pointer(&cmd)))
	runtime.KeepAlive(buf)
	if errno != 0 || status != 0 {
		return fmt.Errorf("%s: identify: status %#x, %v", dev, status, errno)
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

// dmTarget is a line of a device-mapper table: Length sectors from Start
// mapped by the target Kind with its parameters.
type dmTarget struct {
	Start, Length uint64
	Kind, Params  string
}

// dmDelay creates the device-mapper device args[0] over the device
// args[1], linear but for args[3] sectors at sector args[2], which
// dm-delay holds back args[4] ms. The kernel takes the table through
// ioctls on /dev/mapper/control, as dmsetup does.
func dmDelay(args []string) error {
	if len(args) != 5 {
		return errors.New("dm-delay NAME DEV SECTOR N MS")
	}
	name, dev, n := args[0], args[1], sectors(args[2:])
	start, count, ms := n[0], n[1], n[2]
	fd, err := unix.Open(dev, unix.O_RDONLY, 0)
	if err != nil {
		return fmt.Errorf("%s: %w", dev, err)
	}
	var size uint64
	err = ioctl(fd, unix.BLKGETSIZE64, unsafe.Pointer(&size))
	var st unix.Stat_t
	if err == nil {
		err = unix.Fstat(fd, &st)
	}
	unix.Close(fd)
	if err != nil {
		return fmt.Errorf("%s: %w", dev, err)
	}
	devno := fmt.Sprintf("%d:%d", unix.Major(st.Rdev), unix.Minor(st.Rdev))
	end := start + count
	table := []dmTarget{
		{0, start, "linear", devno + " 0"},
		{start, count, "delay", fmt.Sprintf("%s %d %d", devno, start, ms)},
		{end, size/512 - end, "linear", fmt.Sprintf("%s %d", devno, end)},
	}
	ctl, err := unix.Open("/dev/mapper/control", unix.O_RDWR, 0)
	if err != nil {
		return err
	}
	defer unix.Close(ctl)
	if err := dmIoctl(ctl, unix.DM_DEV_CREATE, name, nil); err != nil {
		return fmt.Errorf("DM_DEV_CREATE %s: %w", name, err)
	}
	if err := dmIoctl(ctl, unix.DM_TABLE_LOAD, name, table); err != nil {
		return fmt.Errorf("DM_TABLE_LOAD %s: %w", name, err)
	}
	// Resuming a device puts its loaded table in place.
	if err := dmIoctl(ctl, unix.DM_DEV_SUSPEND, name, nil); err != nil {
		return fmt.Errorf("resuming %s: %w", name, err)
	}
	return nil
}

// dmIoctl makes the device-mapper request req of the device name: a
// struct dm_ioctl followed by the targets, each a struct dm_target_spec
// and its parameters, to the next 8-byte boundary.
func dmIoctl(ctl int, req uintptr, name string, targets []dmTarget) error {
	var specs []byte
	for _, t := range targets {
		n := (unix.SizeofDmTargetSpec + len(t.Params) + 1 + 7) &^ 7
		spec := unix.DmTargetSpec{Sector_start: t.Start, Length: t.Length, Next: uint32(n)}
		copy(spec.Target_type[:], t.Kind)
		b := make([]byte, n)
		copy(b, unsafe.Slice((*byte)(unsafe.Pointer(&spec)), unix.SizeofDmTargetSpec))
		copy(b[unix.SizeofDmTargetSpec:], t.Params)
		specs = append(specs, b...)
	}
	// Words, for the alignment of struct dm_ioctl.
	words := make([]uint64, (unix.SizeofDmIoctl+len(specs)+7)/8)
	buf := unsafe.Slice((*byte)(unsafe.Pointer(&words[0])), len(words)*8)
	hdr := (*unix.DmIoctl)(unsafe.Pointer(&words[0]))
	// Version 4.0.0: any kernel's device-mapper takes it.
	hdr.Version = [3]uint32{unix.DM_VERSION_MAJOR, 0, 0}
	hdr.Data_size = uint32(len(buf))
	hdr.Data_start = unix.SizeofDmIoctl
	hdr.Target_count = uint32(len(targets))
	copy(hdr.Name[:], name)
	copy(buf[unix.SizeofDmIoctl:], specs)
	return ioctl(ctl, req, unsafe.Pointer(&words[0]))
}

// writeOnSignal is readOnSignal for a write: it opens args[0] for
// writing, and when SIGUSR1 comes writes args[1] pages over its start,
// a page per write, without syncing.
func writeOnSignal(args []string) error {
	if len(args) != 2 {
		return errors.New("write-on-signal FILE PAGES")
	}
	pages, err := strconv.Atoi(args[1])
	if err != nil {
		return err
	}
	f, err := os.OpenFile(args[0], os.O_WRONLY, 0)
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
	for i := 0; i < pages; i++ {
		n, err := f.Write(buf)
		total += n
		if err != nil {
			return err
		}
	}
	fmt.Println("wrote", total)
	<-sig
	return nil
}
