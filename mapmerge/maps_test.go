package mapmerge

import (
	"gtrace/output"
)

// sampleMaps has a map of every kind, with the values a run gives them.
func sampleMaps() []*output.Map {
	comm := func(s string) []output.Value { return []output.Value{output.Str(s)} }
	hist := func(vals ...int64) []uint64 {
		b := make([]uint64, (64-2)<<2+1)
		for _, v := range vals {
			b[output.HistBucket(v, 2)]++
		}
		return trim(b)
	}
	lhist := func(vals ...int64) []uint64 {
		b := make([]uint64, 2+(100-0)/10)
		for _, v := range vals {
			b[output.LHistBucket(v, 0, 100, 10)]++
		}
		return trim(b)
	}
	const epoch = 1_750_000_000 // seconds since 1970, interval 1s
	return []*output.Map{
		{Name: "@scalar", Kind: output.Scalar, KeyNames: []string{"pid"}, Entries: []output.Entry{
			{Key: []output.Value{output.Int(1)}, Value: output.Str("systemd")},
			{Key: []output.Value{output.Int(2)}, Value: output.Tuple(output.Str("kthreadd"), output.Pointer(0xff))},
		}},
		{Name: "@x", Kind: output.Count, Entries: []output.Entry{{Value: output.Uint(42)}}},
		{Name: "@zero", Kind: output.Count, Zero: &output.Entry{Value: output.Uint(0)}},
		{Name: "@count", Kind: output.Count, KeyNames: []string{"comm"}, Entries: []output.Entry{
			{Key: comm("bash"), Value: output.Uint(3)},
			{Key: comm("sshd\xff"), Value: output.Uint(10)},
			{Key: comm("cat"), Value: output.Uint(3)},
		}},
		{Name: "@sum", Kind: output.Sum, KeyNames: []string{"comm", "pid"}, Entries: []output.Entry{
			{Key: []output.Value{output.Str("bash"), output.Int(7)}, Value: output.Int(-100)},
			{Key: []output.Value{output.Str("bash"), output.Int(8)}, Value: output.Int(1 << 60)},
		}},
		{Name: "@min", Kind: output.Min, KeyNames: []string{"comm"}, Entries: []output.Entry{
			{Key: comm("a"), Value: output.Int(-5)}, {Key: comm("b"), Value: output.Int(5)},
		}},
		{Name: "@max", Kind: output.Max, KeyNames: []string{"comm"}, Entries: []output.Entry{
			{Key: comm("a"), Value: output.Int(-5)}, {Key: comm("b"), Value: output.Int(5)},
		}},
		{Name: "@avg", Kind: output.Avg, KeyNames: []string{"comm"}, Entries: []output.Entry{
			{Key: comm("a"), Count: 3, Total: 10}, {Key: comm("b"), Count: 1, Total: -7},
		}},
		{Name: "@stats", Kind: output.Stats, Entries: []output.Entry{{Count: 4, Total: 1000}}},
		{Name: "@hist", Kind: output.Hist, HistBits: 2, KeyNames: []string{"comm"}, Entries: []output.Entry{
			{Key: comm("a"), Buckets: hist(-1, 0, 1, 5, 100, 4096, 1<<40)},
			{Key: comm("b"), Buckets: hist(3, 3, 3)},
		}},
		{Name: "@lhist", Kind: output.LHist, LMin: 0, LMax: 100, LStep: 10, Entries: []output.Entry{
			{Buckets: lhist(-3, 0, 9, 10, 55, 99, 100, 1000)},
		}},
		{Name: "@ts", Kind: output.TSeries, Interval: 1e9, Intervals: 5, TSeriesAgg: "sum", KeyNames: []string{"comm"},
			Entries: []output.Entry{
				{Key: comm("a"), Series: []output.Point{
					{Epoch: epoch, Value: output.Int(3)}, {Epoch: epoch + 2, Value: output.Int(-1)}, {Value: output.Int(0)},
				}},
				{Key: comm("b"), Series: []output.Point{{Epoch: epoch + 1, Value: output.Int(9)}}},
			}},
		{Name: "@stacks", Kind: output.Count, KeyNames: []string{"kstack"}, Entries: []output.Entry{
			{Key: []output.Value{output.Stack(output.StackBpftrace, []output.Frame{
				{Addr: 0xffffffff81000010, Sym: "do_sys_open+16", Func: "do_sys_open", Kernel: true},
			})}, Value: output.Uint(5)},
		}},
	}
}

// trim drops trailing zero buckets, as the runtime does.
func trim(b []uint64) []uint64 {
	for len(b) > 0 && b[len(b)-1] == 0 {
		b = b[:len(b)-1]
	}
	return b
}

// printed is what the text and JSON printers print for m, at exit.
func printed(m *output.Map) string {
	return output.MapText(m, 0, 0) + output.MapJSON(m, 0, 0) + output.MapText(m, 2, 3)
}
