package mapmerge

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"runtime"
	"runtime/metrics"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"gtrace/output"
)

// The fleet simulation stands in for `kubectl gtrace run --all-nodes`
// on a cluster: one loopback HTTP server per node plays the gtrace agent
// behind the API server's pod proxy. It answers after a delay (the
// proxy's and gtrace agent's setup), streams a few lines of output, and
// when the run stops sends its map. The plugin's side opens the
// streams, at most concurrency at a time, holds them all open, and
// decodes and merges each node's map as it comes.

type fleetConfig struct {
	nodes       int
	concurrency int           // streams being opened at once
	latency     time.Duration // until a stream's first byte
	run         time.Duration // how long the program runs once all streams are open
	lines       int           // lines of output each node prints
	shape       shape
}

type fleetResult struct {
	open     time.Duration // until every stream is open
	end      time.Duration // from the stop to the merged map
	peakHeap uint64        // most heap in use above what it was at the start
	merged   *output.Map
	counts
}

// counts are counted while the streams run.
type counts struct {
	wire  int64 // bytes of maps received
	lines int64 // lines of output received
	// mostOpening is the most requests the servers saw being opened at
	// once, which the concurrency must bound.
	mostOpening int64
}

// message is one line of a node's stream, framed as gtrace agent
// frames it (agent.Message).
type message struct {
	Type string          `json:"type"`
	Map  json.RawMessage `json:"map"`
}

func runFleet(tb testing.TB, cfg fleetConfig) fleetResult {
	var res fleetResult
	payloads := make([][]byte, cfg.nodes)
	for n := range payloads {
		data, err := Encode(cfg.shape.node(n))
		if err != nil {
			tb.Fatal(err)
		}
		msg, err := json.Marshal(message{Type: "map", Map: data})
		if err != nil {
			tb.Fatal(err)
		}
		payloads[n] = offHeap(tb, append(msg, '\n'))
	}

	stop := make(chan struct{})
	var cnt counts
	var opening atomic.Int64
	servers := make([]*httptest.Server, cfg.nodes)
	for n := range servers {
		servers[n] = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			now := opening.Add(1)
			for {
				most := atomic.LoadInt64(&cnt.mostOpening)
				if now <= most || atomic.CompareAndSwapInt64(&cnt.mostOpening, most, now) {
					break
				}
			}
			time.Sleep(cfg.latency)
			opening.Add(-1)
			w.WriteHeader(http.StatusOK)
			for i := range cfg.lines {
				fmt.Fprintf(w, `{"type":"line","text":"node %d line %d"}`+"\n", n, i)
			}
			w.(http.Flusher).Flush()
			select {
			case <-stop:
			case <-r.Context().Done():
				return
			}
			w.Write(payloads[n])
		}))
	}
	tb.Cleanup(func() {
		for _, s := range servers {
			s.Close()
		}
	})

	runtime.GC()
	base := heapInUse()
	peak := base
	sampled := make(chan struct{})
	doneSampling := make(chan struct{})
	go func() {
		defer close(sampled)
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
		for {
			peak = max(peak, heapInUse())
			select {
			case <-tick.C:
			case <-doneSampling:
				return
			}
		}
	}()

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 1}}
	defer client.CloseIdleConnections()
	openSlots := make(chan struct{}, cfg.concurrency)
	decodeSlots := make(chan struct{}, runtime.GOMAXPROCS(0))
	var (
		mu     sync.Mutex
		mg     Merger
		errs   []error
		opened sync.WaitGroup
		done   sync.WaitGroup
	)
	fail := func(err error) {
		mu.Lock()
		errs = append(errs, err)
		mu.Unlock()
	}
	start := time.Now()
	for n, s := range servers {
		opened.Add(1)
		done.Add(1)
		go func() {
			defer done.Done()
			openSlots <- struct{}{}
			req, _ := http.NewRequestWithContext(ctx, "GET", s.URL+"/stream", nil)
			resp, err := client.Do(req)
			<-openSlots
			opened.Done()
			if err != nil {
				fail(fmt.Errorf("node %d: %w", n, err))
				return
			}
			defer resp.Body.Close()
			if err := readStream(resp.Body, decodeSlots, &cnt, func(m *output.Map) error {
				mu.Lock()
				defer mu.Unlock()
				return mg.Add(m)
			}); err != nil {
				fail(fmt.Errorf("node %d: %w", n, err))
			}
		}()
	}
	opened.Wait()
	res.open = time.Since(start)
	time.Sleep(cfg.run)
	stopped := time.Now()
	close(stop)
	done.Wait()
	res.merged = mg.Map()
	res.end = time.Since(stopped)
	close(doneSampling)
	<-sampled
	res.peakHeap = peak - min(peak, base)
	res.counts = cnt
	if len(errs) > 0 {
		tb.Fatal(errs[0])
	}
	return res
}

// readStream reads a node's lines of output, then its map. It takes
// one of decodeSlots before it reads a map and keeps it until the map
// is merged: at most that many maps are in memory at once, whatever the
// number of nodes, while the others wait in their sockets.
func readStream(body io.Reader, decodeSlots chan struct{}, cnt *counts, add func(*output.Map) error) error {
	r := bufio.NewReader(body)
	mapPrefix := []byte(`{"type":"map"`)
	for {
		head, err := r.Peek(len(mapPrefix))
		if err == io.EOF && len(head) == 0 {
			return nil
		}
		isMap := bytes.Equal(head, mapPrefix)
		if isMap {
			decodeSlots <- struct{}{}
		}
		err = readMessage(r, cnt, add)
		if isMap {
			<-decodeSlots
		}
		if err != nil {
			return err
		}
	}
}

func readMessage(r *bufio.Reader, cnt *counts, add func(*output.Map) error) error {
	line, err := r.ReadBytes('\n')
	if err != nil {
		return err
	}
	// A map is sliced out of its line as the servers frame it: parsing
	// the frame would read the whole map once more.
	frame := []byte(`{"type":"map","map":`)
	data, isMap := bytes.CutPrefix(line, frame)
	data, framed := bytes.CutSuffix(data, []byte("}\n"))
	if !isMap || !framed {
		var msg message
		if err := json.Unmarshal(line, &msg); err != nil {
			return err
		}
		atomic.AddInt64(&cnt.lines, 1)
		return nil
	}
	atomic.AddInt64(&cnt.wire, int64(len(data)))
	m, err := Decode(data)
	if err != nil {
		return err
	}
	return add(m)
}

// offHeap returns a copy of b outside the Go heap: the servers'
// payloads stand for what other machines hold, and on the heap they
// would let it grow by as much again before the garbage collector runs,
// which the peak heap would count.
func offHeap(tb testing.TB, b []byte) []byte {
	mem, err := syscall.Mmap(-1, 0, len(b), syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { syscall.Munmap(mem) })
	copy(mem, b)
	return mem
}

func heapInUse() uint64 {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// TestFleetSimulation runs a small fleet and checks what the plugin's
// side gets: every line, and the same merged map as merging every
// node's map at once, with no more streams being opened at once than
// allowed.
func TestFleetSimulation(t *testing.T) {
	for _, s := range shapes {
		if s.keys > 1000 {
			continue // BenchmarkFleet runs it
		}
		t.Run(s.name, func(t *testing.T) {
			cfg := fleetConfig{nodes: 40, concurrency: 4, latency: 5 * time.Millisecond, lines: 3, shape: s}
			res := runFleet(t, cfg)
			var maps []*output.Map
			for n := range cfg.nodes {
				maps = append(maps, s.node(n))
			}
			want, err := Merge(maps)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(res.merged.Entries, want.Entries) {
				t.Errorf("merged map differs from merging all maps at once")
			}
			if res.lines != int64(cfg.nodes*cfg.lines) {
				t.Errorf("%d lines of output, want %d", res.lines, cfg.nodes*cfg.lines)
			}
			if res.mostOpening > int64(cfg.concurrency) || res.mostOpening < 1 {
				t.Errorf("%d streams opened at once, want 1 to %d", res.mostOpening, cfg.concurrency)
			}
		})
	}
}

// BenchmarkFleet runs a fleet of 1,000 nodes: one op is one run of the
// program across the fleet, its run time left out. It reports how long
// opening every stream took, the time from the stop to the merged map,
// and the peak heap above the start.
func BenchmarkFleet(b *testing.B) {
	for _, s := range shapes {
		for _, conc := range []int{16, 64, 256} {
			if conc != 64 && s.name != "count-100keys" {
				continue
			}
			b.Run(fmt.Sprintf("%s/concurrency-%d", s.name, conc), func(b *testing.B) {
				cfg := fleetConfig{nodes: nodes, concurrency: conc, latency: 50 * time.Millisecond,
					run: 200 * time.Millisecond, lines: 10, shape: s}
				var res fleetResult
				cpu := cpuTime()
				for b.Loop() {
					res = runFleet(b, cfg)
				}
				reportCPU(b, cpu)
				b.ReportMetric(float64(res.open.Milliseconds()), "open-ms")
				b.ReportMetric(float64(res.end.Milliseconds()), "end-ms")
				b.ReportMetric(float64(res.peakHeap)/(1<<20), "peak-heap-MiB")
				b.ReportMetric(float64(res.wire)/float64(cfg.nodes), "wire-B/node")
				b.ReportMetric(float64(res.mostOpening), "most-opening")
			})
		}
	}
}
