// Package container names a container on this machine the way gtrace's
// container filters need it: as a cgroup v2 directory (--cgroup, --pod,
// --container), or as a PID namespace (--pidns); and finds the first
// process of either, the $container_pid of kubectl-trace.
//
// The cgroup v2 hierarchy is found from /proc/mounts: at /sys/fs/cgroup
// on a unified host, at /sys/fs/cgroup/unified (or elsewhere) on a
// hybrid one, where the v1 controllers are mounted beside it. The BPF
// helpers that name a task's cgroup (bpf_get_current_cgroup_id and
// bpf_get_current_ancestor_cgroup_id) always answer in that hierarchy,
// by the cgroup's id, which is its directory's inode number.
//
// A pod is found by its UID as the kubelet lays it out, with the
// systemd cgroup driver
//
//	kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod<UID, - as _>.slice/cri-containerd-<ID>.scope
//
// or the cgroupfs one
//
//	kubepods/burstable/pod<UID>/<ID>
//
// anywhere below the root, since the kubelet's --cgroup-root may move
// kubepods. A pod's containers are the directories in its own.
//
// Nothing here is read unless a flag asks: plain gtrace never walks a
// cgroup tree.
package container
