package main

import (
	"errors"
	"fmt"
)

// setMode takes --mode's value. gtrace runs bpftrace's bench and test
// modes; its other modes are bpftrace's own tooling.
func (o *options) setMode(mode string) error {
	switch mode {
	case "bench", "test":
		o.mode = mode
		return nil
	case "codegen", "compiler-bench", "format":
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

// setTest takes --test, which is --mode test.
func (o *options) setTest() error {
	if o.mode != "" {
		return errors.New("USAGE: --test conflicts with existing --mode")
	}
	return o.setMode("test")
}
