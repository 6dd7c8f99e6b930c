package runtime

import (
	"bytes"
	"errors"
	"sync"
	"testing"
	"time"

	"gtrace/internal/testutils"
	"gtrace/output"
)

// TestSnapshots reads the maps of a running script over and over, while
// the script counts and clears: every read has every map, decoded, the
// count never goes down, and once tracing has ended a read says so.
func TestSnapshots(t *testing.T) {
	testutils.RequireRoot(t)
	src := `interval:ms:5 { @ticks = count(); @keys[cpu] = count(); }
		interval:ms:20 { clear(@keys); }
		interval:ms:500 { exit(); }`
	var mu sync.Mutex
	var read func() (*Snapshot, error)
	var ticks []int64
	var errs []error
	done := make(chan struct{})
	opts := &Options{Printer: output.NewText(&bytes.Buffer{}, &bytes.Buffer{}), Stderr: &bytes.Buffer{}, Quiet: true}
	opts.Snapshots = func(r func() (*Snapshot, error)) {
		read = r
		go func() {
			defer close(done)
			for {
				snap, err := r()
				if errors.Is(err, ErrEnded) {
					return
				}
				mu.Lock()
				switch {
				case err != nil:
					errs = append(errs, err)
				case len(snap.Maps) != 2 || snap.Maps[0].Name != "@keys" || snap.Maps[1].Name != "@ticks":
					errs = append(errs, errors.New("maps missing"))
				case snap.Maps[0].Source != nil || snap.Maps[1].Source != nil:
					errs = append(errs, errors.New("entries not decoded"))
				case len(snap.Maps[1].Entries) == 1:
					n, _ := snap.Maps[1].Entries[0].Value.Integer()
					ticks = append(ticks, n)
				}
				mu.Unlock()
				time.Sleep(5 * time.Millisecond)
			}
		}()
	}
	if _, err := Run(compile(t, src), opts); err != nil {
		t.Fatal(err)
	}
	<-done
	if errs != nil {
		t.Errorf("snapshots failed: %v", errs)
	}
	if len(ticks) < 5 {
		t.Errorf("%d snapshots with @ticks, want a few: %v", len(ticks), ticks)
	}
	for i := 1; i < len(ticks); i++ {
		if ticks[i] < ticks[i-1] {
			t.Errorf("@ticks went down: %v", ticks)
			break
		}
	}
	if _, err := read(); !errors.Is(err, ErrEnded) {
		t.Errorf("read after Run: %v, want ErrEnded", err)
	}
}
