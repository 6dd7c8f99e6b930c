package runtime

import (
	"errors"
	"fmt"

	"gtrace/output"
)

// Snapshot is what a script's maps and probes hold at one moment while
// it traces: what `gtrace serve` exposes at each scrape.
type Snapshot struct {
	// Maps holds every map of the script, in name order, its entries
	// decoded into Entries (Source is nil).
	Maps []*output.Map
	// MapFull counts, by map name ("@x"), the updates the kernel
	// refused because the map was full.
	MapFull map[string]uint64
	// Lost is the number of events the ring buffer refused so far.
	Lost uint64
	// Probes holds each probe's runs and run time; nil unless
	// Options.Stats is set.
	Probes []output.ProbeStat
}

// ErrEnded is what a snapshot function returns once tracing has ended.
var ErrEnded = errors.New("tracing has ended")

// snapshotReply is one answer of the event loop to a snapshot request.
type snapshotReply struct {
	snap *Snapshot
	err  error
}

// startSnapshots hands opts.Snapshots the function that reads the maps,
// once the probes are attached.
func (r *run) startSnapshots() {
	if r.opts.Snapshots == nil {
		return
	}
	r.snapshotReqs = make(chan chan snapshotReply, 1)
	r.traced = make(chan struct{})
	r.opts.Snapshots(r.snapshot)
}

// endSnapshots makes every snapshot, waiting or to come, return
// ErrEnded. Run calls it as tracing ends, and again on its way out.
func (r *run) endSnapshots() {
	if r.traced != nil && !r.tracedClosed {
		r.tracedClosed = true
		close(r.traced)
	}
}

// snapshot reads the maps and probe costs while tracing. It may be
// called from any goroutine: the event loop does the reading, between
// two events, as the maps' decoding (symbols, clear() and zero()) is
// its own.
func (r *run) snapshot() (*Snapshot, error) {
	select {
	case <-r.traced:
		return nil, ErrEnded // rather than queue a request no one reads
	default:
	}
	reply := make(chan snapshotReply, 1)
	select {
	case r.snapshotReqs <- reply:
	case <-r.traced:
		return nil, ErrEnded
	}
	r.rd.Flush() // wakes the event loop if it sleeps
	select {
	case rep := <-reply:
		return rep.snap, rep.err
	case <-r.traced:
		// The loop may have answered just before it ended.
		select {
		case rep := <-reply:
			return rep.snap, rep.err
		default:
			return nil, ErrEnded
		}
	}
}

// answerSnapshot answers a waiting snapshot request, if there is one.
func (r *run) answerSnapshot() {
	select {
	case reply := <-r.snapshotReqs:
		snap, err := r.takeSnapshot()
		reply <- snapshotReply{snap, err}
	default:
	}
}

// takeSnapshot reads every map, the map-full and lost-event counters and,
// with --stats, each probe's runs.
func (r *run) takeSnapshot() (*Snapshot, error) {
	snap := &Snapshot{MapFull: map[string]uint64{}, Lost: r.sumCounter("lost", 0)}
	for _, l := range r.out.SortedMaps() {
		if n := r.sumCounter("mapfull", l.Index); n > 0 {
			snap.MapFull[l.Name] = n
		}
		m, err := r.readMap(l)
		if err != nil {
			return nil, fmt.Errorf("snapshot: %w", err)
		}
		if m.Source != nil {
			entries := make([]output.Entry, m.Source.Len())
			for i := range entries {
				entries[i] = m.Source.Entry(i, true)
			}
			m.Entries, m.Source = entries, nil
		}
		snap.Maps = append(snap.Maps, m)
	}
	if r.opts.Stats {
		r.probeMissed = r.kprobeMisses()
		snap.Probes = r.probeStats()
	}
	return snap, nil
}
