package vm

import (
	"testing"
	"time"

	"gtrace/internal/vmtest"
)

const vmFlowScript = vmShellFuncs + `
aff=/sys/kernel/tracing/available_filter_functions
FUNCS='vfs_*,filemap_*,page_cache_*,read_pages,*readahead*,folio_alloc*,__folio_alloc*,blkdev_*'
DD="dd if=/dev/nvme0n1 of=/dev/null bs=64k count=1"
section counts sh -c "for p in vfs_ filemap_ page_cache folio_ blkdev_ __x64_sys_ tcp_ ip_ sock_ net_ skb_ security_ kmem_ ext4_ blk_ bio_ mm_ proc_ seq_ kernfs_ sysfs_ dev_ device_ pci_ acpi_ irq_ sched_ do_ __do_ xfs_ nvme_ __; do echo \$p \$(grep -c ^\$p $aff); done; wc -l $aff"
echo 3 >/proc/sys/vm/drop_caches
section cold /gtrace flow --syscall read -c "$DD" $FUNCS
section warm /gtrace flow --syscall read -c "$DD" $FUNCS
echo 3 >/proc/sys/vm/drop_caches
section cold-graph /gtrace flow --graph --syscall read -c "$DD" $FUNCS
section warm-graph /gtrace flow --graph --syscall read -c "$DD" $FUNCS
`

func TestVMFlow(t *testing.T) {
	files := map[string]string{"/gtrace": vmtest.BuildGtrace(t)}
	for _, k := range vmtest.Kernels {
		t.Run(k.Name, func(t *testing.T) {
			start := time.Now()
			sections := guestSections(t, vmtest.Config{Kernel: k, Files: files, NVMe: true, Timeout: 4 * time.Minute}, vmFlowScript)
			t.Logf("took %v", time.Since(start))
			for _, name := range []string{"counts", "cold", "warm", "cold-graph", "warm-graph"} {
				sections.get(t, name, 0)
			}
		})
	}
}
