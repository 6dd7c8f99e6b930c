package runtime

import (
	"errors"
	"fmt"

	"github.com/cilium/ebpf"
)

// rcuWaiter waits for every BPF program running now to return. After an
// update of a map-in-map, the kernel waits for an RCU grace period
// before it returns to user space, so that no program still uses the
// old inner map; gtrace's programs are not sleepable, so each run is
// inside one RCU read-side section.
type rcuWaiter struct {
	outer, inner *ebpf.Map
}

func newRCUWaiter() (*rcuWaiter, error) {
	inner := &ebpf.MapSpec{Type: ebpf.Array, KeySize: 4, ValueSize: 4, MaxEntries: 1}
	outer, err := ebpf.NewMap(&ebpf.MapSpec{Name: "rcu_wait", Type: ebpf.ArrayOfMaps, KeySize: 4, ValueSize: 4,
		MaxEntries: 1, InnerMap: inner})
	if err != nil {
		return nil, fmt.Errorf("create the map-in-map that waits for programs: %w", err)
	}
	in, err := ebpf.NewMap(inner)
	if err != nil {
		outer.Close()
		return nil, fmt.Errorf("create the map-in-map that waits for programs: %w", err)
	}
	return &rcuWaiter{outer: outer, inner: in}, nil
}

func (w *rcuWaiter) wait() error {
	return w.outer.Put(uint32(0), w.inner)
}

func (w *rcuWaiter) Close() error {
	return errors.Join(w.outer.Close(), w.inner.Close())
}
