package main

import (
	"os"

	"bufio"
	"bytes"
	"gtrace/codegen"
	"io"
)

// bufferedOutput wraps the output as -B asks: "none" writes each record
// at once, "line" each line, "full" only when the buffer fills and at
// exit. By default the buffer is written whenever no event is waiting
// (flushIdle): one write per event would limit the events printed per
// second to the write calls a CPU can make. The writer is flushed with
// done.
func bufferedOutput(w io.Writer, mode string) (out io.Writer, flushIdle, done func() error) {
	if mode == "none" {
		return w, nil, func() error { return nil }
	}
	bw := bufio.NewWriterSize(w, 64<<10)
	switch mode {
	case "line":
		return lineWriter{bw}, nil, bw.Flush
	case "full":
		return bw, nil, bw.Flush
	}
	return bw, bw.Flush, bw.Flush
}

// lineWriter writes out its buffer after each write that ends a line.
type lineWriter struct{ *bufio.Writer }

func (l lineWriter) Write(p []byte) (int, error) {
	n, err := l.Writer.Write(p)
	if err == nil && bytes.IndexByte(p, '\n') >= 0 {
		err = l.Flush()
	}
	return n, err
}

// writeELF writes the compiled programs to path as a BPF object file
// (--emit-elf), instead of running them.
func writeELF(path string, out *codegen.Output) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := out.WriteELF(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
