package e2e

import (
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"gtrace/calltrace"
	"gtrace/tests/internal/chromium"
	"gtrace/tests/internal/harness"
)

// bioThread is where a call runs.
type bioThread struct {
	cpu, pid, tid int
	comm          string
}

// webviewRecording is what `gtrace class bio` records of three writes: each
// bio is submitted by a writer, completed in an interrupt, its fields
// changing on the way. The first two complete on another CPU than the
// one they were submitted on; the third stays on CPU 0, and its last
// call's return was missed. The second is split.
func webviewRecording() *calltrace.Recording {
	rec := &calltrace.Recording{Command: "class", Struct: "bio",
		Fields: []string{"bi_iter.bi_sector", "bi_iter.bi_size", "bi_opf", "bi_status"}}
	b := calltrace.NewBuilder(rec)
	dd := bioThread{0, 4242, 4242, "dd"}
	kworker := bioThread{1, 311, 311, "kworker/u8:2"}
	irq0 := bioThread{0, 0, 0, "swapper/0"}
	irq1 := bioThread{1, 0, 0, "swapper/1"}
	const base = 5_000_000_000_000 // ns since boot
	var t *calltrace.Track
	enter := func(th bioThread, fn string, us float64, fields ...string) {
		b.Enter(t, &calltrace.Call{Func: fn, Entry: base + uint64(us*1000), CPU: th.cpu, Pid: th.pid, Tid: th.tid, Comm: th.comm, Fields: fields})
	}
	exit := func(th bioThread, fn string, us float64) {
		b.Exit(t, th.tid, fn, base+uint64(us*1000))
	}

	t = b.Track("bio 0xffff888104a3c000 #1")
	enter(dd, "submit_bio", 1, "2048", "4096", "0x8801", "0")
	enter(dd, "submit_bio_noacct", 1.3, "2048", "4096", "0x8801", "0")
	enter(dd, "blk_mq_submit_bio", 1.62, "2048", "4096", "0x8801", "0")
	enter(dd, "bio_integrity_prep", 1.9, "2048", "4096", "0x8801", "0")
	exit(dd, "bio_integrity_prep", 2.15)
	enter(dd, "blk_mq_bio_to_request", 2.4, "2048", "4096", "0x8801", "0")
	exit(dd, "blk_mq_bio_to_request", 2.95)
	exit(dd, "blk_mq_submit_bio", 3.5)
	exit(dd, "submit_bio_noacct", 3.8)
	exit(dd, "submit_bio", 4.05)
	enter(irq1, "bio_endio", 52, "2056", "0", "0x8801", "0")
	enter(irq1, "end_bio_bh_io_sync", 52.31, "2056", "0", "0x8801", "0")
	exit(irq1, "end_bio_bh_io_sync", 52.84)
	exit(irq1, "bio_endio", 53.2)

	t = b.Track("bio 0xffff888104a3c300 #2")
	enter(kworker, "submit_bio", 70, "8192", "131072", "0x1", "0")
	enter(kworker, "submit_bio_noacct", 70.4, "8192", "131072", "0x1", "0")
	enter(kworker, "bio_split", 70.9, "8192", "131072", "0x1", "0")
	exit(kworker, "bio_split", 71.6)
	enter(kworker, "blk_mq_submit_bio", 72, "8320", "65536", "0x1", "0")
	exit(kworker, "blk_mq_submit_bio", 74.5)
	exit(kworker, "submit_bio_noacct", 75)
	exit(kworker, "submit_bio", 75.3)
	enter(irq1, "bio_endio", 180, "8448", "0", "0x1", "0")
	exit(irq1, "bio_endio", 181.1)

	t = b.Track("bio 0xffff888104a3c600 #3")
	enter(dd, "submit_bio", 200, "4096", "4096", "0x8801", "0")
	enter(dd, "blk_mq_submit_bio", 200.5, "4096", "4096", "0x8801", "0")
	exit(dd, "blk_mq_submit_bio", 203)
	exit(dd, "submit_bio", 203.4)
	enter(irq0, "bio_endio", 260, "4104", "0", "0x8801", "10")
	enter(irq0, "end_bio_bh_io_sync", 260.2, "4104", "0", "0x8801", "10")
	exit(irq0, "bio_endio", 261) // end_bio_bh_io_sync's return was missed
	return rec
}

// TestWebView serves a recording with `gtrace view --serve`, opens the
// page in headless Chromium and acts on it as a user would: it lists
// the objects, shows one's call tree and timeline on a click, filters
// by CPU, searches, and highlights the fields that changed at a call.
func TestWebView(t *testing.T) {
	rec := webviewRecording()
	url, stop := serveView(t, rec)
	p := chromium.Open(t, url, 1200, 800)
	waitTrue(t, p, `document.body.dataset.loaded === "true"`)
	shownTracks := func() []string {
		return evalStrings(p.Eval(`[...document.querySelectorAll("#tracks tbody tr")].map(r => r.querySelector(".name").textContent)`))
	}
	var names []string
	for _, tr := range rec.Tracks {
		names = append(names, tr.Name)
	}
	if got := shownTracks(); !slices.Equal(got, names) {
		t.Errorf("the list shows %q, want %q", got, names)
	}

	first := rec.Tracks[0]
	clickOn(t, p, fmt.Sprintf(`#tracks tr[data-id="%d"]`, first.ID))
	if got, want := evalStrings(p.Eval(`[...document.querySelectorAll("#tree tbody tr")].map(r =>
		r.dataset.depth + " " + r.querySelector(".func").lastChild.textContent + " " + r.querySelector(".dur").textContent)`)), pageTree(first); !slices.Equal(got, want) {
		t.Errorf("the call tree of %s shows\n%s\nwant\n%s", first.Name, strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	threads := map[int]bool{}
	calls := 0
	first.Walk(func(c *calltrace.Call, _ int) { threads[c.Tid] = true; calls++ })
	if lanes, bars := p.Eval(`document.querySelectorAll("#timeline .lane").length`), p.Eval(`document.querySelectorAll("#timeline .bar").length`); lanes != float64(len(threads)) || bars != float64(calls) {
		t.Errorf("the timeline has %v lanes and %v bars, want %d and %d", lanes, bars, len(threads), calls)
	}

	// A double click on a bar spans the timeline over its call; one
	// beside the bars spans it over the whole track again.
	inner := first.Calls[0].Calls[0].Calls[0]
	bar := `[...document.querySelectorAll("#timeline .bar")].find(b => b.textContent === ` + chromium.Quote(inner.Func) + `)`
	share := `(() => { const b = ` + bar + `; return b.getBoundingClientRect().width / b.parentElement.getBoundingClientRect().width; })()`
	before := p.Eval(share).(float64)
	doubleClick(t, p, bar)
	if got := p.Eval(share).(float64); got < 0.99 || before > 0.5 {
		t.Errorf("a double click on %s widens its bar from %.2f to %.2f of the lane, want from under half to all of it", inner.Func, before, got)
	}
	doubleClick(t, p, `document.querySelector("#timeline .label")`)
	if got := p.Eval(share).(float64); math.Abs(got-before) > 0.01 {
		t.Errorf("a double click beside the bars leaves %s's bar at %.2f of the lane, want %.2f as before", inner.Func, got, before)
	}

	// Folding the first call hides the calls inside it, not itself.
	rows := `document.querySelectorAll("#tree tbody tr").length`
	clickOn(t, p, `#tree tbody tr:first-child .toggle`)
	if got, want := p.Eval(rows), float64(calls-callsIn(first.Calls[0])+1); got != want {
		t.Errorf("after folding %s the tree has %v rows, want %v", first.Calls[0].Func, got, want)
	}
	clickOn(t, p, `#tree tbody tr:first-child .toggle`)
	if got := p.Eval(rows); got != float64(calls) {
		t.Errorf("after unfolding the tree has %v rows, want %d", got, calls)
	}

	for _, cpu := range []int{0, 1} {
		p.Eval(fmt.Sprintf(`(() => { const s = document.getElementById("cpu"); s.value = "%d"; s.dispatchEvent(new Event("change")); })()`, cpu))
		var want []string
		for _, tr := range rec.Tracks {
			on := false
			tr.Walk(func(c *calltrace.Call, _ int) { on = on || c.CPU == cpu })
			if on {
				want = append(want, tr.Name)
			}
		}
		if got := shownTracks(); !slices.Equal(got, want) || len(want) == len(rec.Tracks) {
			t.Errorf("with CPU %d the list shows %q, want %q, fewer than all", cpu, got, want)
		}
	}
	p.Eval(`(() => { const s = document.getElementById("cpu"); s.value = ""; s.dispatchEvent(new Event("change")); })()`)

	p.Eval(`document.getElementById("search").focus()`)
	p.Type("bio_split")
	if got := shownTracks(); !slices.Equal(got, []string{rec.Tracks[1].Name}) {
		t.Errorf("a search for bio_split lists %q, want only %s", got, rec.Tracks[1].Name)
	}
	clickOn(t, p, fmt.Sprintf(`#tracks tr[data-id="%d"]`, rec.Tracks[1].ID))
	if got := evalStrings(p.Eval(`[...document.querySelectorAll("#tree tr.hit .func")].map(e => e.lastChild.textContent)`)); !slices.Equal(got, []string{"bio_split"}) {
		t.Errorf("the search marks %q in the tree, want bio_split", got)
	}
	p.Eval(`(() => { const s = document.getElementById("search"); s.value = ""; s.dispatchEvent(new Event("input")); })()`)
	if got := shownTracks(); len(got) != len(rec.Tracks) {
		t.Errorf("an empty search lists %q, want every track", got)
	}

	// The completion of the first bio: its sector moved on and its size
	// went to 0 since the submission.
	clickOn(t, p, fmt.Sprintf(`#tracks tr[data-id="%d"]`, first.ID))
	endio, row := first.Calls[1], 0
	first.Walk(func(c *calltrace.Call, _ int) {
		if c.Entry <= endio.Entry {
			row++
		}
	})
	clickOn(t, p, fmt.Sprintf(`#tree tbody tr:nth-child(%d)`, row))
	if got := p.Eval(`document.querySelector("#details h3").textContent`); got != endio.Func {
		t.Fatalf("the details show %v, want %s", got, endio.Func)
	}
	got := evalStrings(p.Eval(`[...document.querySelectorAll("#fields tr.changed")].map(r => r.dataset.field)`))
	if want := changedFields(rec, first, endio); !slices.Equal(got, want) || len(want) == 0 {
		t.Errorf("at %s the fields %q are highlighted, want %q", endio.Func, got, want)
	}

	shot := filepath.Join(t.TempDir(), "webview.png")
	f, err := os.Create(shot)
	if err != nil {
		t.Fatal(err)
	}
	p.Screenshot(f)
	f.Close()
	t.Logf("screenshot of the web view: %s", shot)
	stop()
}

// TestWebViewFlow checks the page of a flow recording: its tracks are
// threads, and its calls have no fields; the tree of a thread with many
// calls draws the first thousand, and more on demand.
func TestWebViewFlow(t *testing.T) {
	rec := &calltrace.Recording{Command: "flow"}
	b := calltrace.NewBuilder(rec)
	for i, th := range []bioThread{{0, 4242, 4242, "dd"}, {1, 4243, 4243, "cat"}} {
		tr := b.Track(fmt.Sprintf("%s %d", th.comm, th.tid))
		at := uint64(1_000_000 + 10_000*i)
		for j, fn := range []string{"__x64_sys_read", "ksys_read", "vfs_read"} {
			b.Enter(tr, &calltrace.Call{Func: fn, Entry: at + uint64(100*j), CPU: th.cpu, Pid: th.pid, Tid: th.tid, Comm: th.comm})
		}
		for j, fn := range []string{"vfs_read", "ksys_read", "__x64_sys_read"} {
			b.Exit(tr, th.tid, fn, at+uint64(1000+100*j))
		}
	}
	yes := b.Track("yes 4244")
	const writes = 1500
	for i := range writes {
		at := uint64(2_000_000 + 1000*i)
		b.Enter(yes, &calltrace.Call{Func: "ksys_write", Entry: at, CPU: 1, Pid: 4244, Tid: 4244, Comm: "yes"})
		b.Exit(yes, 4244, "ksys_write", at+500)
	}
	url, stop := serveView(t, rec)
	p := chromium.Open(t, url, 1200, 800)
	waitTrue(t, p, `document.body.dataset.loaded === "true"`)
	if got := p.Eval(`document.getElementById("kind").textContent + ", " + document.getElementById("status").textContent`); got != "thread, 3 of 3 threads" {
		t.Errorf("the list is headed %q, want thread, 3 of 3 threads", got)
	}
	second := rec.Tracks[1]
	clickOn(t, p, fmt.Sprintf(`#tracks tr[data-id="%d"]`, second.ID))
	clickOn(t, p, `#tree tbody tr:last-child`)
	got := evalStrings(p.Eval(`[...document.querySelectorAll("#tree tbody tr")].map(r =>
		r.dataset.depth + " " + r.querySelector(".func").lastChild.textContent + " " + r.querySelector(".dur").textContent)`))
	if want := pageTree(second); !slices.Equal(got, want) {
		t.Errorf("the call tree of %s shows %q, want %q", second.Name, got, want)
	}
	if details := p.Eval(`[document.querySelector("#details h3").textContent, document.getElementById("fields") === null]`); !reflect.DeepEqual(details, []any{"vfs_read", true}) {
		t.Errorf("the details of the last call are [name, no fields] = %v, want [vfs_read true]", details)
	}

	clickOn(t, p, fmt.Sprintf(`#tracks tr[data-id="%d"]`, yes.ID))
	calls := `document.querySelectorAll("#tree tr.call").length`
	if got := p.Eval(calls); got != 1000.0 {
		t.Errorf("the tree of %d calls draws %v, want the first 1000", writes, got)
	}
	clickOn(t, p, `#tree tr.more button`)
	if got, button := p.Eval(calls), p.Eval(`document.querySelector("#tree tr.more") === null`); got != float64(writes) || button != true {
		t.Errorf("after a click on draw more, the tree draws %v calls (no more button: %v), want all %d", got, button, writes)
	}
	stop()
}

// serveView writes rec to a file, serves it with gtrace view --serve on
// a free port, and returns the page's address and a function that
// stops the server with SIGINT and checks that it exits 0, saying
// nothing on stderr.
func serveView(t *testing.T, rec *calltrace.Recording) (url string, stop func()) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "trace.json")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := rec.WriteChrome(f); err != nil {
		t.Fatal(err)
	}
	f.Close()

	view := exec.Command(harness.Bin(), "view", "--serve", "127.0.0.1:0", path)
	var stderr strings.Builder
	view.Stderr = &stderr
	var serving string
	lines := harness.StartWait(t, view, harness.Stdout, func(l string) bool {
		serving = l
		return strings.HasPrefix(l, "Serving ")
	}, nil)
	go harness.Drain(lines)
	exited := false
	t.Cleanup(func() {
		if !exited {
			view.Process.Kill()
			view.Wait()
		}
	})
	m := regexp.MustCompile(`^Serving (.*) at (http://127\.0\.0\.1:\d+/) ; Ctrl-C to stop$`).FindStringSubmatch(serving)
	if m == nil || m[1] != path {
		t.Fatalf("gtrace view printed %q, want Serving %s at http://127.0.0.1:PORT/ ; Ctrl-C to stop", serving, path)
	}
	return m[2], func() {
		t.Helper()
		view.Process.Signal(syscall.SIGINT)
		view.Wait()
		exited = true
		if code := view.ProcessState.ExitCode(); code != 0 || stderr.Len() > 0 {
			t.Errorf("gtrace view exited %d after SIGINT, stderr %q; want 0 and nothing", code, stderr.String())
		}
	}
}

// pageTree is a track's call tree as the page should show it: the depth,
// function and duration of each call, outer before inner.
func pageTree(tr *calltrace.Track) []string {
	var rows []string
	tr.Walk(func(c *calltrace.Call, depth int) {
		d := "-"
		if c.Exit != 0 {
			d = fmt.Sprintf("%.3f us", float64(c.Duration())/1e3)
		}
		rows = append(rows, fmt.Sprintf("%d %s %s", depth, c.Func, d))
	})
	return rows
}

// callsIn counts c and the calls inside it.
func callsIn(c *calltrace.Call) int {
	n := 1
	for _, in := range c.Calls {
		n += callsIn(in)
	}
	return n
}

// changedFields names the fields of c that differ from the track's call
// entered just before it.
func changedFields(rec *calltrace.Recording, tr *calltrace.Track, c *calltrace.Call) []string {
	var prev *calltrace.Call
	tr.Walk(func(o *calltrace.Call, _ int) {
		if o.Entry < c.Entry && (prev == nil || o.Entry > prev.Entry) {
			prev = o
		}
	})
	var names []string
	for i, name := range rec.Fields {
		if prev != nil && c.Fields[i] != prev.Fields[i] {
			names = append(names, name)
		}
	}
	return names
}

// clickOn clicks with the mouse in the middle of the element selector
// finds.
func clickOn(t *testing.T, p *chromium.Page, selector string) {
	t.Helper()
	p.Mouse(middle(t, p, `document.querySelector(`+chromium.Quote(selector)+`)`))
}

// doubleClick double-clicks with the mouse in the middle of the element
// that the JavaScript expression elem returns.
func doubleClick(t *testing.T, p *chromium.Page, elem string) {
	t.Helper()
	x, y, _ := middle(t, p, elem)
	for _, count := range []int{1, 2} {
		for _, typ := range []string{"mousePressed", "mouseReleased"} {
			p.Call("Input.dispatchMouseEvent", map[string]any{"type": typ, "x": x, "y": y, "button": "left", "clickCount": count}, nil)
		}
	}
}

// middle scrolls to the element that the JavaScript expression elem
// returns and returns its middle on the screen, and true, to click.
func middle(t *testing.T, p *chromium.Page, elem string) (x, y float64, click bool) {
	t.Helper()
	xy, ok := p.Eval(`(() => {
		const e = ` + elem + `;
		if (!e) return null;
		e.scrollIntoView({block: "center"});
		const r = e.getBoundingClientRect();
		return [r.x + r.width / 2, r.y + r.height / 2];
	})()`).([]any)
	if !ok {
		t.Fatalf("no element %s on the page", elem)
	}
	return xy[0].(float64), xy[1].(float64), true
}

// waitTrue waits until the expression is true in the page.
func waitTrue(t *testing.T, p *chromium.Page, expr string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for p.Eval(expr) != true {
		if time.Now().After(deadline) {
			t.Fatalf("%s is still not true after 30s", expr)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// evalStrings is a list of strings that Eval returned.
func evalStrings(v any) []string {
	var s []string
	list, _ := v.([]any)
	for _, e := range list {
		s = append(s, fmt.Sprint(e))
	}
	return s
}

// TestWebViewErrors checks that gtrace view refuses what it cannot serve
// at once, with a message.
func TestWebViewErrors(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "none.json")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"view", "--serve", "127.0.0.1:0", missing}, "ERROR: open " + missing + ": no such file or directory\n"},
		{[]string{"view", missing}, "ERROR: invalid arguments to view\n\nUSAGE:\n    gtrace view --serve ADDR FILE\n"},
	} {
		r := harness.Gtrace(t, tc.args...)
		if r.Code != 1 || !strings.HasPrefix(r.Stderr, tc.want) || r.Stdout != "" {
			t.Errorf("gtrace %q: exit %d, stdout %q, stderr %q; want 1, nothing and %q", tc.args, r.Code, r.Stdout, r.Stderr, tc.want)
		}
	}
}
