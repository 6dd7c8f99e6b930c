package runtime

import (
	"fmt"
	"io"

	"github.com/cilium/ebpf/link"

	"gtrace/probe"
)

// readIters reads each iterator the script attached to its end, printing
// what its program printed, as bpftrace does, then ends tracing. A
// pinned iterator is not read: gtrace says where it is, and anyone may
// read it later.
func (r *run) readIters() error {
	iters := false
	for _, p := range r.out.Progs {
		pr := &p.Prog.Probe
		if pr.Kind != probe.Iter {
			continue
		}
		iters = true
		if pr.Pin != "" {
			if err := r.opts.Printer.Printf("Program pinned to " + pr.PinPath() + "\n"); err != nil {
				return err
			}
			continue
		}
		for _, l := range r.progLinks[p.Name] {
			if it, ok := l.(*link.Iter); ok {
				if err := r.readIter(pr, it); err != nil {
					return err
				}
			}
		}
	}
	if !iters {
		return nil
	}
	err := r.drain()
	r.exit = true
	return err
}

// readIter copies what one iterator's program prints to the output.
func (r *run) readIter(p *probe.Probe, it *link.Iter) error {
	rd, err := it.Open()
	if err != nil {
		return fmt.Errorf("%s: open iterator: %w", p.Name, err)
	}
	defer rd.Close()
	if _, err := io.Copy(printfWriter{r}, rd); err != nil {
		return fmt.Errorf("%s: read iterator: %w", p.Name, err)
	}
	return nil
}

// printfWriter writes to the output as printf does.
type printfWriter struct{ r *run }

func (w printfWriter) Write(b []byte) (int, error) {
	if err := w.r.opts.Printer.Printf(string(b)); err != nil {
		return 0, err
	}
	return len(b), nil
}
