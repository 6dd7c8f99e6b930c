package calltrace

import (
	"bytes"
	"strings"
	"testing"
)

// twoReads records two read system calls on one thread, the first
// missing the page cache (readahead under filemap_read), the second
// hitting it; the second's touch_atime never returns.
func twoReads() *Recording {
	r := &Recording{Command: "flow"}
	b := NewBuilder(r)
	t := b.Track("dd 7")
	ts := uint64(1000)
	enter := func(fn string) {
		b.Enter(t, &Call{Func: fn, Entry: ts, Tid: 7})
		ts += 1000
	}
	exit := func(fn string) {
		b.Exit(t, 7, fn, ts)
		ts += 1000
	}
	enter("read")
	enter("vfs_read")
	enter("filemap_read")
	enter("page_cache_sync_ra")
	enter("read_pages")
	exit("read_pages")
	exit("page_cache_sync_ra")
	exit("filemap_read")
	enter("touch_atime")
	exit("touch_atime")
	exit("vfs_read")
	exit("read")
	enter("read")
	enter("vfs_read")
	enter("filemap_read")
	exit("filemap_read")
	enter("touch_atime")
	exit("vfs_read")
	exit("read")
	return r
}

func TestGraph(t *testing.T) {
	tests := []struct {
		name string
		rec  *Recording
		want string
	}{
		{"two reads", twoReads(), `# TOTAL TIME   FUNCTION
 17.000 us : (2) read
 13.000 us : (2) vfs_read
  6.000 us :  +-(2) filemap_read
  3.000 us :  | (1) page_cache_sync_ra
  1.000 us :  | (1) read_pages
           :  |
  1.000 us :  +-(2) touch_atime
`},
		{"two roots", func() *Recording {
			r := &Recording{}
			b := NewBuilder(r)
			t := b.Track("t")
			for i, fn := range []string{"read", "write", "read"} {
				b.Enter(t, &Call{Func: fn, Entry: uint64(10 * i), Tid: 1})
				b.Enter(t, &Call{Func: "vfs_" + fn, Entry: uint64(10*i + 1), Tid: 1})
				b.Exit(t, 1, fn, uint64(10*i+5)) // vfs_'s return missed
			}
			return r
		}(), `# TOTAL TIME   FUNCTION
  0.010 us : (2) read
  0.000 us : (2) vfs_read

  0.005 us : (1) write
  0.000 us : (1) vfs_write
`},
		{"empty", &Recording{}, "# TOTAL TIME   FUNCTION\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b strings.Builder
			if err := WriteGraph(&b, tt.rec.Graph()); err != nil {
				t.Fatal(err)
			}
			if b.String() != tt.want {
				t.Errorf("got\n%s\nwant\n%s", b.String(), tt.want)
			}
		})
	}
}

func TestBuilderReturnDepth(t *testing.T) {
	r := &Recording{}
	b := NewBuilder(r)
	tr := b.Track("t")
	b.Enter(tr, &Call{Func: "a", Entry: 1, Tid: 1})
	b.Enter(tr, &Call{Func: "b", Entry: 2, Tid: 1})
	b.Enter(tr, &Call{Func: "c", Entry: 3, Tid: 2})
	if d := b.Depth(tr, 1); d != 2 {
		t.Errorf("depth of thread 1 %d, want 2", d)
	}
	if c := b.Return(tr, 1, "a", 9); c == nil || c.Func != "a" || c.Duration() != 8 {
		t.Errorf("return of a gave %+v, want a of 8 ns", c)
	}
	if d := b.Depth(tr, 1); d != 0 {
		t.Errorf("depth of thread 1 after a returned %d, want 0", d)
	}
	if c := b.Return(tr, 1, "c", 10); c != nil {
		t.Errorf("c returned on thread 1, where it was never entered: %+v", c)
	}
	if d := b.Depth(tr, 2); d != 1 {
		t.Errorf("depth of thread 2 %d, want 1", d)
	}
}

// TestChromeUnfinishedInside checks that a call whose return was missed
// ends with its caller, not after it, when the track goes on.
func TestChromeUnfinishedInside(t *testing.T) {
	r := &Recording{Command: "flow"}
	b := NewBuilder(r)
	tr := b.Track("t")
	b.Enter(tr, &Call{Func: "read", Entry: 1, Tid: 1})
	b.Enter(tr, &Call{Func: "touch_atime", Entry: 2, Tid: 1})
	b.Exit(tr, 1, "read", 3)
	b.Enter(tr, &Call{Func: "read", Entry: 4, Tid: 1})
	b.Exit(tr, 1, "read", 5)
	for _, rec := range []*Recording{twoReads(), r} {
		var buf bytes.Buffer
		if err := rec.WriteChrome(&buf); err != nil {
			t.Fatal(err)
		}
		if err := Check(&buf); err != nil {
			t.Errorf("written trace breaks the format's rules: %v", err)
		}
	}
}
