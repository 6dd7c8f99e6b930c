package sema

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"gtrace/lang/ast"
	"gtrace/lang/diag"
	"gtrace/lang/token"
)

// setting is an integer config key, as a script's config block and the
// BPFTRACE_* environment name it: the field it sets and its largest value.
type setting struct {
	field func(*Config) *int
	max   uint64
}

// settings are the integer config keys. max_strlen is bounded by the
// scratch space a string may take, max_map_keys by a map's u32
// max_entries; max_probes by the same, well above what any kernel attaches.
var settings = map[string]setting{
	"max_strlen":   {func(c *Config) *int { return &c.MaxStrlen }, 1024},
	"max_map_keys": {func(c *Config) *int { return &c.MaxMapKeys }, math.MaxUint32},
	"max_probes":   {func(c *Config) *int { return &c.MaxProbes }, math.MaxUint32},
}

// set checks n against the setting's range before storing it: an
// unchecked value wraps negative when it becomes an int.
func (s setting) set(c *Config, n uint64) error {
	if n == 0 || n > s.max {
		return fmt.Errorf("%d is out of range: want 1 to %d", n, s.max)
	}
	*s.field(c) = int(n)
	return nil
}

// choices maps the config keys that take a word to their setters.
var choices = map[string]func(*Config, string) error{
	"missing_probes": func(c *Config, v string) error {
		switch v {
		case "error", "warn", "ignore":
			c.MissingProbes = v
			return nil
		}
		return fmt.Errorf("want error, warn or ignore, got %q", v)
	},
}

// configure returns base with the BPFTRACE_* environment and then the
// script's config block applied, in bpftrace's order of precedence (the
// command line, in base, sets only what neither may). Settings base leaves
// zero take bpftrace's defaults. Errors in the block
// are located at their entry; the environment's have no place to point at.
func configure(base Config, env func(string) (string, bool), block []*ast.ConfigEntry) (Config, diag.List) {
	cfg := withDefaults(base)
	var errs diag.List
	if env != nil {
		for _, key := range sortedKeys() {
			name := "BPFTRACE_" + strings.ToUpper(key)
			v, ok := env(name)
			if !ok {
				continue
			}
			if err := setFromEnv(&cfg, key, v); err != nil {
				errs.Add(token.Span{Start: token.NoPos, End: token.NoPos}, "%s: %v", name, err)
			}
		}
	}
	for _, e := range block {
		if err := configEntry(&cfg, e); err != nil {
			errs.Add(e.Span(), "%v", err)
		}
	}
	return cfg, errs
}

// withDefaults fills the settings cfg leaves zero, which none may be,
// with bpftrace's defaults.
func withDefaults(cfg Config) Config {
	def := DefaultConfig()
	for _, s := range settings {
		if p := s.field(&cfg); *p == 0 {
			*p = *s.field(&def)
		}
	}
	if cfg.MissingProbes == "" {
		cfg.MissingProbes = def.MissingProbes
	}
	return cfg
}

// sortedKeys lists every config key, in a fixed order so that errors come
// out the same way each run.
func sortedKeys() []string {
	var keys []string
	for k := range settings {
		keys = append(keys, k)
	}
	for k := range choices {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// setFromEnv applies the environment's value v of the config key.
func setFromEnv(cfg *Config, key, v string) error {
	if set, ok := choices[key]; ok {
		return set(cfg, v)
	}
	s := settings[key]
	n, err := strconv.ParseUint(v, 10, 64)
	if err != nil {
		return fmt.Errorf("want an integer from 1 to %d, got %q", s.max, v)
	}
	return s.set(cfg, n)
}

// configEntry applies one entry of a script's config block.
func configEntry(cfg *Config, e *ast.ConfigEntry) error {
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
