package agent

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"sync"

	"gtrace/mapmerge"
	"gtrace/output"
)

// Stream writes the answer of /v1/run, one Message a line, each sent
// as soon as it is complete. It is safe for concurrent use.
type Stream struct {
	mu  sync.Mutex
	w   io.Writer
	err error // the first failed write: the caller has gone
	// Stdout takes what the script prints, Stderr gtrace's diagnostics,
	// each as lines.
	Stdout, Stderr io.Writer
}

func newStream(w io.Writer) *Stream {
	s := &Stream{w: w}
	s.Stdout = &lineWriter{s: s, typ: "line"}
	s.Stderr = &lineWriter{s: s, typ: "stderr"}
	return s
}

// send writes m and flushes it to the caller.
func (s *Stream) send(m Message) error {
	data, err := json.Marshal(m)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		return s.err
	}
	if _, err := s.w.Write(append(data, '\n')); err != nil {
		s.err = err
		return err
	}
	if f, ok := s.w.(http.Flusher); ok {
		f.Flush()
	}
	return nil
}

// end sends what the line writers hold, then the end with the exit code.
func (s *Stream) end(code int) {
	s.Stdout.(*lineWriter).flush()
	s.Stderr.(*lineWriter).flush()
	s.send(Message{Type: "end", Exit: &code})
}

// Printer returns the printer of a run: text on Stdout while the script
// runs, and the maps printed at its end as "map" messages, for the
// caller to merge with other nodes'.
func (s *Stream) Printer() output.Printer {
	return &streamPrinter{Printer: output.NewText(s.Stdout, s.Stderr), s: s}
}

type streamPrinter struct {
	output.Printer
	s     *Stream
	ended bool
}

func (p *streamPrinter) End() error {
	p.ended = true
	p.s.Stdout.(*lineWriter).flush()
	return nil
}

func (p *streamPrinter) Map(m *output.Map, top int, div uint32) error {
	if !p.ended {
		return p.Printer.Map(m, top, div)
	}
	data, err := mapmerge.Encode(m)
	if err != nil {
		return err
	}
	return p.s.send(Message{Type: "map", Map: data})
}

// lineWriter sends each complete line written to it as a message.
type lineWriter struct {
	mu      sync.Mutex
	s       *Stream
	typ     string
	pending []byte
}

func (l *lineWriter) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.pending = append(l.pending, b...)
	for {
		i := bytes.IndexByte(l.pending, '\n')
		if i < 0 {
			return len(b), nil
		}
		line := string(l.pending[:i])
		l.pending = l.pending[i+1:]
		if err := l.s.send(Message{Type: l.typ, Text: line}); err != nil {
			return 0, err
		}
	}
}

// flush sends a last line that has no newline.
func (l *lineWriter) flush() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.pending) > 0 {
		l.s.send(Message{Type: l.typ, Text: string(l.pending)})
		l.pending = nil
	}
}
