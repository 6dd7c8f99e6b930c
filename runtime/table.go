package runtime

import (
	"encoding/binary"
	"errors"
	"reflect"
	"unsafe"

	"github.com/cilium/ebpf"
	"golang.org/x/sys/unix"

	"gtrace/codegen"
	"gtrace/output"
	"gtrace/sema"
)

// table is a map read into columns: its keys raw, its per-CPU values
// merged into a few words each. A key or a value becomes an
// output.Value only when it prints, so that a map of a million keys
// costs tens of bytes a key rather than a kilobyte.
type table struct {
	l   *codegen.MapLayout
	dec *decoder
	// keySize is the size of a key as the script wrote it: hist and
	// lhist maps add a bucket index, which is not part of it.
	keySize int
	keys    []byte   // the keys, keySize bytes each
	words   []uint64 // the merged values, width words each
	width   int
	// raw holds the values of maps that are not per-CPU, for they may
	// be strings or records: ValueSize bytes each.
	raw     []byte
	buckets [][]uint64 // hist and lhist counts by key
	// byKey indexes keys, when entries must be grouped or may repeat:
	// hist and lhist maps hold one entry per key and bucket, and a
	// NextKey walk starts over when the key it is at is deleted.
	byKey map[string]int32
	n     int
}

func newTable(l *codegen.MapLayout, dec *decoder) *table {
	t := &table{l: l, dec: dec, keySize: l.KeySize, width: 1}
	switch l.Value.Agg {
	case sema.AggHist, sema.AggLHist:
		t.keySize -= 8
		t.byKey = map[string]int32{}
	case sema.AggMin, sema.AggMax, sema.AggAvg, sema.AggStats:
		t.width = 2
	}
	if l.Buckets > 0 {
		t.keySize = 0
	}
	return t
}

func (t *table) hist() bool { return t.l.Value.Agg == sema.AggHist || t.l.Value.Agg == sema.AggLHist }

func (t *table) Len() int { return t.n }

func (t *table) Entry(i int, key bool) output.Entry {
	var e output.Entry
	if key && t.keySize > 0 {
		e.Key = t.dec.keyValues(t.l, t.keys[i*t.keySize:(i+1)*t.keySize])
	}
	if !t.l.PerCPU {
		vs := t.l.ValueSize
		e.Value = t.dec.value(t.l.Value, t.raw[i*vs:(i+1)*vs])
		return e
	}
	w := t.words[i*t.width:]
	switch t.l.Value.Agg {
	case sema.AggCount:
		e.Value = output.Uint(w[0])
	case sema.AggSum, sema.AggMin, sema.AggMax:
		e.Value = output.Int(int64(w[0]))
	case sema.AggAvg, sema.AggStats:
		e.Count, e.Total = int64(w[0]), int64(w[1])
	case sema.AggHist, sema.AggLHist:
		e.Buckets = t.buckets[i]
	}
	return e
}

// read reads every entry of m, in batches where the kernel can.
func (t *table) read(m *ebpf.Map) error {
	err := lookupBatches(m, t.l.PerCPU, t.add)
	if errors.Is(err, ebpf.ErrNotSupported) {
		t.reset()
		return t.readEach(m)
	}
	return err
}

// batchBytes bounds the values a batch reads at once.
const batchBytes = 1 << 20

// lookupBatches calls fn with each key of m and its value, all CPUs'
// values of a per-CPU map one after the other, reading them in batches.
// It fails with ebpf.ErrNotSupported where the kernel cannot batch.
func lookupBatches(m *ebpf.Map, perCPU bool, fn func(k, v []byte)) error {
	ksize, vsize := int(m.KeySize()), int(m.ValueSize())
	ncpu := 1
	if perCPU {
		n, err := ebpf.PossibleCPU()
		if err != nil {
			return err
		}
		ncpu = n
		vsize = align8(vsize)
	}
	batch := max(64, min(int(m.MaxEntries()), batchBytes/(ncpu*vsize)))
	var cursor ebpf.MapBatchCursor
	for {
		keysOut, keys := byteRows(batch, ksize)
		// BatchLookup counts per-CPU values as bytes, others as rows.
		vals := make([]byte, batch*ncpu*vsize)
		var valsOut any = vals
		if !perCPU {
			valsOut, vals = byteRows(batch, vsize)
		}
		n, err := m.BatchLookup(&cursor, keysOut, valsOut, nil)
		if errors.Is(err, unix.ENOSPC) {
			// A hash bucket holds more entries than the batch.
			batch *= 2
			continue
		}
		if err != nil && !errors.Is(err, ebpf.ErrKeyNotExist) {
			return err
		}
		for i := range n {
			fn(keys[i*ksize:(i+1)*ksize], vals[i*ncpu*vsize:(i+1)*ncpu*vsize])
		}
		if err != nil {
			return nil // ErrKeyNotExist: that was the last batch
		}
	}
}

// byteRows returns a slice of n rows of size bytes, the form in which
// BatchLookup counts keys and values, and the bytes it is made of.
func byteRows(n, size int) (any, []byte) {
	rows := reflect.MakeSlice(reflect.SliceOf(reflect.ArrayOf(size, reflect.TypeFor[byte]())), n, n)
	return rows.Interface(), unsafe.Slice((*byte)(rows.UnsafePointer()), n*size)
}

// readEach reads m key by key, for kernels without batch lookups of its
// type.
func (t *table) readEach(m *ebpf.Map) error {
	t.byKey = map[string]int32{}
	keys, err := allKeys(m, t.l.KeySize)
	if err != nil {
		return err
	}
	for _, k := range keys {
		raw, err := m.LookupBytes(k)
		if err != nil {
			return err
		}
		if raw != nil { // else deleted meanwhile
			t.add(k, raw)
		}
	}
	return nil
}

func (t *table) reset() {
	*t = *newTable(t.l, t.dec)
}

// add merges the entry of key k with the per-CPU values in raw into t.
func (t *table) add(k, raw []byte) {
	i := t.n
	if t.byKey != nil {
		idx, seen := t.byKey[string(k[:t.keySize])]
		if !seen {
			idx = int32(t.n)
			t.byKey[string(k[:t.keySize])] = idx
		}
		i = int(idx)
	}
	if i == t.n {
		t.n++
		t.keys = append(t.keys, k[:t.keySize]...)
		t.words = append(t.words, make([]uint64, t.width)...)
		if t.hist() {
			t.buckets = append(t.buckets, nil)
		}
		if !t.l.PerCPU {
			t.raw = append(t.raw, make([]byte, t.l.ValueSize)...)
		}
	}
	if !t.l.PerCPU {
		copy(t.raw[i*t.l.ValueSize:], raw)
		return
	}
	t.merge(i, k, raw)
}

// merge folds the per-CPU values in raw into entry i.
func (t *table) merge(i int, key, raw []byte) {
	stride := align8(t.l.ValueSize)
	ncpu := len(raw) / stride
	word := func(cpu, i int) uint64 {
		return binary.LittleEndian.Uint64(raw[cpu*stride+8*i:])
	}
	w := t.words[i*t.width : (i+1)*t.width]
	switch agg := t.l.Value.Agg; agg {
	case sema.AggCount, sema.AggSum:
		for c := range ncpu {
			w[0] += word(c, 0)
		}
	case sema.AggMin, sema.AggMax:
		// w[1] says whether a CPU has set w[0].
		for c := range ncpu {
			if word(c, 1) == 0 {
				continue
			}
			x, best := int64(word(c, 0)), int64(w[0])
			if w[1] == 0 || agg == sema.AggMin && x < best || agg == sema.AggMax && x > best {
				w[0], w[1] = uint64(x), 1
			}
		}
	case sema.AggAvg, sema.AggStats:
		for c := range ncpu {
			w[0] += word(c, 0)
			w[1] += word(c, 1)
		}
	case sema.AggHist, sema.AggLHist:
		var b int
		if t.l.Buckets > 0 {
			b = int(binary.LittleEndian.Uint32(key))
		} else {
			b = int(binary.LittleEndian.Uint64(key[t.keySize:]))
		}
		bs := t.buckets[i]
		if b >= len(bs) {
			bs = append(bs, make([]uint64, b+1-len(bs))...)
			t.buckets[i] = bs
		}
		for c := range ncpu {
			bs[b] += word(c, 0)
		}
	}
}

// trimBuckets makes an array-backed histogram look as a hash-backed one
// does, whose buckets stop at the highest one counted: without trailing
// empty buckets, and gone if none has a count.
func (t *table) trimBuckets() {
	if t.n == 0 {
		return
	}
	bs := t.buckets[0]
	n := len(bs)
	for n > 0 && bs[n-1] == 0 {
		n--
	}
	if n == 0 {
		t.reset()
		return
	}
	t.buckets[0] = bs[:n]
}
