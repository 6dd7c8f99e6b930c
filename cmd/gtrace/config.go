package main

import (
	"fmt"
	"os"
	"strconv"
	"strings"

	"gtrace/lang/ast"
	"gtrace/sema"
)

// settings maps config keys, as a script's config block and the
// BPFTRACE_* environment name them, to the field they set.
var settings = map[string]func(*sema.Config) *int{
	"max_strlen":   func(c *sema.Config) *int { return &c.MaxStrlen },
	"max_map_keys": func(c *sema.Config) *int { return &c.MaxMapKeys },
	"max_probes":   func(c *sema.Config) *int { return &c.MaxProbes },
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
// then the script's config block, then the command line.
func config(prog *ast.Program, o *options) (sema.Config, error) {
	cfg := sema.DefaultConfig()
	for key, field := range settings {
		env := "BPFTRACE_" + strings.ToUpper(key)
		if s, ok := os.LookupEnv(env); ok {
			n, err := strconv.Atoi(s)
			if err != nil || n <= 0 {
				return cfg, fmt.Errorf("%s: want a positive integer, got %q", env, s)
			}
			*field(&cfg) = n
		}
	}
	for key, set := range choices {
		env := "BPFTRACE_" + strings.ToUpper(key)
		if s, ok := os.LookupEnv(env); ok {
			if err := set(&cfg, s); err != nil {
				return cfg, fmt.Errorf("%s: %w", env, err)
			}
		}
	}
	for _, e := range prog.Config {
		key := strings.TrimPrefix(strings.ToLower(e.Key), "bpftrace_")
		if set, ok := choices[key]; ok {
			var word string
			switch v := e.Value.(type) {
			case *ast.Ident:
				word = v.Name
			case *ast.StrLit:
				word = v.Value
			}
			if err := set(&cfg, word); err != nil {
				return cfg, fmt.Errorf("config setting %s: %w", e.Key, err)
			}
			continue
		}
		field, ok := settings[key]
		if !ok {
			return cfg, fmt.Errorf("unknown config setting: %s", e.Key)
		}
		lit, ok := e.Value.(*ast.IntLit)
		if !ok || lit.Value == 0 {
			return cfg, fmt.Errorf("config setting %s: want a positive integer", e.Key)
		}
		*field(&cfg) = int(lit.Value)
	}
	if cfg.MaxStrlen > 1024 {
		return cfg, fmt.Errorf("max_strlen %d is too large: at most 1024", cfg.MaxStrlen)
	}
	cfg.Unsafe = o.unsafe
	cfg.Params = o.params
	return cfg, nil
}
