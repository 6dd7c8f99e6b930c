package main

import (
	"errors"
	"fmt"
)

// setMode takes --mode's value. gtrace runs bpftrace's bench mode; its
// other modes are bpftrace's own tooling.
func (o *options) setMode(mode string) error {
	switch mode {
	case "bench":
		o.mode = mode
		return nil
	case "codegen", "compiler-bench", "test", "format":
		return fmt.Errorf("--mode %s is not supported", mode)
	}
	return errors.New("USAGE: --mode can only be 'codegen', 'compiler-bench', 'bench', 'test' or 'format'.")
}

// setBench takes --bench, which is --mode bench.
func (o *options) setBench() error {
	if o.mode != "" {
		return errors.New("USAGE: --bench conflicts with existing --mode")
	}
	return o.setMode("bench")
}
