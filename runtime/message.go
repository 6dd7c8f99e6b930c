package runtime

import (
	"encoding/binary"
	"fmt"
	"os"
	"strings"
	"time"

	"gtrace/codegen"
	"gtrace/output"
)

// message prints an errorf() or warnf() to stderr as bpftrace does: the
// call's place and the message on one line, then the macro calls it was
// expanded from; JSON output prints a record instead. --no-warnings
// silences warnf().
func (r *run) message(id int, ev *codegen.Event, args []output.Value) error {
	if ev.Kind == codegen.EvWarnf && r.opts.NoWarnings {
		return nil
	}
	f, err := r.format(id, ev.Format)
	if err != nil {
		return err
	}
	msg := strings.TrimSuffix(f.Sprint(args), "\n")
	if mp, ok := r.opts.Printer.(output.MessagePrinter); ok {
		return mp.Message(ev.Kind == codegen.EvErrorf, msg, ev.Loc)
	}
	// What was printed before comes first.
	if r.opts.Flush != nil {
		if err := r.opts.Flush(); err != nil {
			return err
		}
	}
	first, notes, _ := strings.Cut(ev.Where, "\n")
	_, err = fmt.Fprintf(r.opts.Stderr, "%s%s\n%s", first, msg, notes)
	return err
}

// skbOutput writes a packet of skboutput() to its pcap file, opened at
// the first packet, without the bytes the call's offset leaves out.
func (r *run) skbOutput(ev *codegen.Event, rec []byte) error {
	ns := binary.LittleEndian.Uint64(rec[8:])
	n := min(int(binary.LittleEndian.Uint64(rec[16:])), len(rec)-24)
	pkt := rec[24 : 24+n]
	if ev.Offset >= int64(len(pkt)) {
		return nil // nothing to write
	}
	w, ok := r.pcaps[ev.Format]
	if !ok {
		f, err := os.Create(ev.Format)
		if err != nil {
			return fmt.Errorf("skboutput: %w", err)
		}
		if w, err = output.NewPcap(f); err != nil {
			f.Close()
			return fmt.Errorf("skboutput: %w", err)
		}
		if r.pcaps == nil {
			r.pcaps = map[string]*output.Pcap{}
		}
		r.pcaps[ev.Format] = w
	}
	at := r.dec.boot.Add(time.Duration(ns))
	if err := w.Write(at, pkt[ev.Offset:]); err != nil {
		return fmt.Errorf("skboutput: %w", err)
	}
	return nil
}

// closePcaps closes the files of skboutput().
func (r *run) closePcaps() {
	for _, w := range r.pcaps {
		w.Close()
	}
}
