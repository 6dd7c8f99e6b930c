package main

import (
	"errors"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"

	"gtrace/lang/ast"
	"gtrace/lang/diag"
	"gtrace/sema"
)

// setting is an integer config key, as a script's config block and the
// BPFTRACE_* environment name it: the field it sets and its largest value.
type setting struct {
	field func(*sema.Config) *int
	max   uint64
}

// settings are the integer config keys. max_strlen is bounded by the
// scratch space a string may take, max_map_keys by a map's u32
// max_entries; max_probes by the same, well above what any kernel attaches.
var settings = map[string]setting{
	"max_strlen":   {func(c *sema.Config) *int { return &c.MaxStrlen }, 1024},
	"max_map_keys": {func(c *sema.Config) *int { return &c.MaxMapKeys }, math.MaxUint32},
	"max_probes":   {func(c *sema.Config) *int { return &c.MaxProbes }, math.MaxUint32},
}

// set checks n against the setting's range before storing it: an
// unchecked value wraps negative when it becomes an int.
func (s setting) set(c *sema.Config, n uint64) error {
	if n == 0 || n > s.max {
		return fmt.Errorf("%d is out of range: want 1 to %d", n, s.max)
	}
	*s.field(c) = int(n)
	return nil
}

// choices maps the config keys that take a word to their setters.
var choices = map[string]func(*sema.Config, string) error{
	"missing_probes": func(c *sema.Config, v string) error {
		switch v {
		case "error", "warn", "ignore":
			c.MissingProbes = v
			return nil
		}
		return fmt.Errorf("want error, warn or ignore, got %q", v)
	},
}

// config builds the checker's settings: defaults, then the environment,
// then the script's config block, then the command line. Errors in the
// config block come as a diag.List, located.
func config(prog *ast.Program, o *options) (sema.Config, error) {
	cfg := sema.DefaultConfig()
	for key, s := range settings {
		env := "BPFTRACE_" + strings.ToUpper(key)
		v, ok := os.LookupEnv(env)
		if !ok {
			continue
		}
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			return cfg, fmt.Errorf("%s: want an integer from 1 to %d, got %q", env, s.max, v)
		}
		if err := s.set(&cfg, n); err != nil {
			return cfg, fmt.Errorf("%s: %w", env, err)
		}
	}
	for key, set := range choices {
		env := "BPFTRACE_" + strings.ToUpper(key)
		if v, ok := os.LookupEnv(env); ok {
			if err := set(&cfg, v); err != nil {
				return cfg, fmt.Errorf("%s: %w", env, err)
			}
		}
	}
	var errs diag.List
	for _, e := range prog.Config {
		if err := configEntry(&cfg, e); err != nil {
			errs.Add(e.Span(), "%v", err)
		}
	}
	if len(errs) > 0 {
		return cfg, errs
	}
	cfg.Unsafe = o.unsafe
	cfg.Params = o.params
	return cfg, nil
}

// configEntry applies one entry of a script's config block.
func configEntry(cfg *sema.Config, e *ast.ConfigEntry) error {
	key := strings.TrimPrefix(strings.ToLower(e.Key), "bpftrace_")
	if set, ok := choices[key]; ok {
		var word string
		switch v := e.Value.(type) {
		case *ast.Ident:
			word = v.Name
		case *ast.StrLit:
			word = v.Value
		}
		if err := set(cfg, word); err != nil {
			return fmt.Errorf("config setting %s: %w", e.Key, err)
		}
		return nil
	}
	s, ok := settings[key]
	if !ok {
		return errors.New("unknown config setting: " + e.Key)
	}
	lit, ok := e.Value.(*ast.IntLit)
	if !ok {
		return fmt.Errorf("config setting %s: want an integer from 1 to %d", e.Key, s.max)
	}
	if err := s.set(cfg, lit.Value); err != nil {
		return fmt.Errorf("config setting %s: %w", e.Key, err)
	}
	return nil
}
