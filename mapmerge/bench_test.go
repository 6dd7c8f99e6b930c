package mapmerge

import (
	"runtime"
	"syscall"
	"testing"
	"time"

	"gtrace/output"
)

// nodes is the size of the cluster the benchmarks merge.
const nodes = 1000

// BenchmarkMerge merges the maps of 1,000 nodes, made on demand (which
// costs little next to merging them), and reports the size of one
// node's map on the wire.
func BenchmarkMerge(b *testing.B) {
	for _, s := range shapes {
		b.Run(s.name, func(b *testing.B) {
			maps := make([]*output.Map, nodes)
			for n := range maps {
				maps[n] = s.node(n)
			}
			data, err := Encode(maps[0])
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			var merged *output.Map
			cpu := cpuTime()
			for b.Loop() {
				if merged, err = Merge(maps); err != nil {
					b.Fatal(err)
				}
			}
			reportCPU(b, cpu)
			b.ReportMetric(float64(len(data)), "wire-B/node")
			b.ReportMetric(float64(len(merged.Entries)), "merged-keys")
		})
	}
}

// BenchmarkDecode decodes 1,000 nodes' wire payloads, one op being all
// 1,000, and merges them one at a time as the plugin does.
func BenchmarkDecode(b *testing.B) {
	for _, s := range shapes {
		b.Run(s.name, func(b *testing.B) {
			payloads := make([][]byte, nodes)
			var total int
			for n := range payloads {
				var err error
				if payloads[n], err = Encode(s.node(n)); err != nil {
					b.Fatal(err)
				}
				total += len(payloads[n])
			}
			b.Run("decode", func(b *testing.B) {
				b.ReportAllocs()
				b.SetBytes(int64(total))
				cpu := cpuTime()
				for b.Loop() {
					for _, p := range payloads {
						if _, err := Decode(p); err != nil {
							b.Fatal(err)
						}
					}
				}
				reportCPU(b, cpu)
			})
			b.Run("decode+merge", func(b *testing.B) {
				b.ReportAllocs()
				b.SetBytes(int64(total))
				cpu := cpuTime()
				for b.Loop() {
					var mg Merger
					for _, p := range payloads {
						m, err := Decode(p)
						if err != nil {
							b.Fatal(err)
						}
						if err := mg.Add(m); err != nil {
							b.Fatal(err)
						}
					}
				}
				reportCPU(b, cpu)
			})
		})
	}
}

// BenchmarkEncode is what a node spends writing its map.
func BenchmarkEncode(b *testing.B) {
	for _, s := range shapes {
		b.Run(s.name, func(b *testing.B) {
			m := s.node(0)
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Encode(m); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// cpuTime is the CPU time the process has used, user and system: on a
// machine shared with other work it says more than the wall clock.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// reportCPU reports the CPU time per op since start, garbage
// collection included.
func reportCPU(b *testing.B, start time.Duration) {
	b.ReportMetric(float64(cpuTime()-start)/float64(b.N)/1e6, "cpu-ms/op")
}

// BenchmarkDecodedSize reports the heap a decoded map of each shape
// keeps, from 50 of them held at once: what holding every node's map
// before merging would cost, where Merger holds one at a time.
func BenchmarkDecodedSize(b *testing.B) {
	const held = 50
	for _, s := range shapes {
		b.Run(s.name, func(b *testing.B) {
			data, err := Encode(s.node(0))
			if err != nil {
				b.Fatal(err)
			}
			var perMap float64
			for b.Loop() {
				maps := make([]*output.Map, held)
				runtime.GC()
				before := heapInUse()
				for i := range maps {
					if maps[i], err = Decode(data); err != nil {
						b.Fatal(err)
					}
				}
				runtime.GC()
				perMap = float64(heapInUse()-before) / held
				runtime.KeepAlive(maps)
			}
			b.ReportMetric(perMap, "heap-B/map")
			b.ReportMetric(perMap*nodes/(1<<20), "heap-MiB/1000maps")
		})
	}
}
