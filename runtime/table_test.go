package runtime

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"reflect"
	"slices"
	"testing"

	"github.com/cilium/ebpf"

	"gtrace/codegen"
	"gtrace/internal/testutils"
	"gtrace/output"
	"gtrace/sema"
)

// TestTableRead fills per-CPU and plain hash maps and checks that reading
// them in batches and key by key gives the same keys and merged entries,
// and the ones expected.
func TestTableRead(t *testing.T) {
	testutils.RequireRoot(t)
	ncpu, err := ebpf.PossibleCPU()
	if err != nil {
		t.Fatal(err)
	}
	str := &sema.Type{Kind: sema.String, Size: 16}
	tests := []struct {
		name string
		l    *codegen.MapLayout
		n    int // keys, or buckets of one hist key
		// value is what CPU cpu holds for key k.
		value func(k, cpu int) []byte
		want  func(k int) output.Entry
	}{
		{"count", &codegen.MapLayout{Key: sema.Uint64, Value: &sema.Type{Kind: sema.Agg, Agg: sema.AggCount},
			KeySize: 8, ValueSize: 8, PerCPU: true}, 5000,
			func(k, cpu int) []byte { return words(uint64(k + cpu)) },
			func(k int) output.Entry { return output.Entry{Value: output.Uint(uint64(ncpu*k + ncpu*(ncpu-1)/2))} }},
		{"min", &codegen.MapLayout{Key: sema.Uint64, Value: &sema.Type{Kind: sema.Agg, Agg: sema.AggMin},
			KeySize: 8, ValueSize: 16, PerCPU: true}, 300,
			// CPU 0 has not set its value, which must not count.
			func(k, cpu int) []byte { return words(uint64(k-cpu), uint64(min(cpu, 1))) },
			func(k int) output.Entry {
				if ncpu == 1 {
					return output.Entry{Value: output.Int(0)}
				}
				return output.Entry{Value: output.Int(int64(k - ncpu + 1))}
			}},
		{"stats", &codegen.MapLayout{Key: sema.Uint64, Value: &sema.Type{Kind: sema.Agg, Agg: sema.AggStats},
			KeySize: 8, ValueSize: 16, PerCPU: true}, 300,
			func(k, cpu int) []byte { return words(1, uint64(k)) },
			func(k int) output.Entry { return output.Entry{Count: int64(ncpu), Total: int64(ncpu * k)} }},
		{"hist", &codegen.MapLayout{Key: sema.Uint64, Value: &sema.Type{Kind: sema.Agg, Agg: sema.AggHist},
			KeySize: 16, ValueSize: 8, PerCPU: true}, 40,
			func(k, cpu int) []byte { return words(1) },
			nil},
		{"string values", &codegen.MapLayout{Key: sema.Uint64, Value: str, KeySize: 8, ValueSize: 16}, 2000,
			func(k, cpu int) []byte { return append([]byte(fmt.Sprintf("v%d", k)), make([]byte, 16)...)[:16] },
			func(k int) output.Entry { return output.Entry{Value: output.Str(fmt.Sprintf("v%d", k))} }},
	}
	dec := &decoder{}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			typ, vsize := ebpf.Hash, tt.l.ValueSize
			if tt.l.PerCPU {
				typ = ebpf.PerCPUHash
			}
			m, err := ebpf.NewMap(&ebpf.MapSpec{Type: typ, KeySize: uint32(tt.l.KeySize),
				ValueSize: uint32(vsize), MaxEntries: uint32(tt.n)})
			if err != nil {
				t.Fatal(err)
			}
			defer m.Close()
			for k := range tt.n {
				key := make([]byte, tt.l.KeySize)
				if tt.want == nil {
					// One hist key, 7, with one count per CPU in bucket k.
					binary.LittleEndian.PutUint64(key, 7)
					binary.LittleEndian.PutUint64(key[8:], uint64(k))
				} else {
					binary.LittleEndian.PutUint64(key, uint64(k))
				}
				var val any = tt.value(k, 0)
				if tt.l.PerCPU {
					perCPU := make([][]byte, ncpu)
					for c := range perCPU {
						perCPU[c] = tt.value(k, c)
					}
					val = perCPU
				}
				if err := m.Update(key, val, ebpf.UpdateAny); err != nil {
					t.Fatal(err)
				}
			}
			batched, each := newTable(tt.l, dec), newTable(tt.l, dec)
			if err := lookupBatches(m, tt.l.PerCPU, batched.add); err != nil {
				t.Fatal(err)
			}
			if err := each.readEach(m); err != nil {
				t.Fatal(err)
			}
			keys, err := allKeys(m, tt.l.KeySize)
			if err != nil {
				t.Fatal(err)
			}
			keysEach, err := nextKeys(m, tt.l.KeySize)
			if err != nil {
				t.Fatal(err)
			}
			slices.SortFunc(keys, bytes.Compare)
			slices.SortFunc(keysEach, bytes.Compare)
			if len(keys) != tt.n || !reflect.DeepEqual(keys, keysEach) {
				t.Fatalf("%d keys in batches, %d one by one, want %d", len(keys), len(keysEach), tt.n)
			}
			got, gotEach := tableEntries(batched), tableEntries(each)
			if !reflect.DeepEqual(got, gotEach) {
				t.Fatalf("batches and key by key differ:\n%v\n%v", got, gotEach)
			}
			if tt.want == nil {
				want := make([]uint64, tt.n)
				for i := range want {
					want[i] = uint64(ncpu)
				}
				if len(got) != 1 || !reflect.DeepEqual(got[7].Buckets, want) {
					t.Fatalf("hist = %v, want key 7 with buckets %v", got, want)
				}
				return
			}
			if len(got) != tt.n {
				t.Fatalf("read %d keys, want %d", len(got), tt.n)
			}
			for k, e := range got {
				if want := tt.want(int(k)); !reflect.DeepEqual(e.Value, want.Value) ||
					e.Count != want.Count || e.Total != want.Total {
					t.Fatalf("key %d: got %+v, want %+v", k, e, want)
				}
			}
		})
	}
}

// words lays out 64-bit words as a map value.
func words(ws ...uint64) []byte {
	b := make([]byte, 8*len(ws))
	for i, w := range ws {
		binary.LittleEndian.PutUint64(b[8*i:], w)
	}
	return b
}

// tableEntries returns t's entries by their integer key.
func tableEntries(t *table) map[uint64]output.Entry {
	es := map[uint64]output.Entry{}
	for i := range t.Len() {
		e := t.Entry(i, true)
		es[binary.LittleEndian.Uint64(t.keys[i*t.keySize:])] = e
	}
	return es
}
