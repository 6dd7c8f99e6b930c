package sema

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"gtrace/lang/ast"
	"gtrace/lang/diag"
	"gtrace/lang/token"
)

// Settings are the config settings beyond those Config names: what code
// generation, the runtime and the printers follow, and the ones gtrace
// accepts for bpftrace's sake and leaves unused (the symbolisation
// settings and the unstable flags).
type Settings struct {
	CacheUserSymbols  string // PER_PID, PER_PROGRAM, NONE, or "" for as ASLR says
	CppDemangle       bool
	LazySymbolication bool
	License           string
	LogSize           int
	MaxBPFProgs       int
	MaxCatBytes       int
	OnStackLimit      int // values larger than this live in scratch memory, not on the stack
	PerfRBPages       int
	PrintMapsOnExit   bool
	ShowDebugInfo     bool
	StackMode         string // bpftrace, perf, raw or build_id
	StrTruncTrailer   string // printed after a string that filled its buffer
	UseBlazesym       bool
	// Unstable holds the unstable_* settings by short name: enable,
	// warn or error.
	Unstable map[string]string
}

func defaultSettings() Settings {
	return Settings{
		CppDemangle:       true,
		LazySymbolication: true,
		License:           "GPL",
		LogSize:           1000000,
		MaxBPFProgs:       1024,
		MaxCatBytes:       10240,
		// bpftrace's default is 32 bytes; gtrace keeps on the stack
		// whatever fits in its 512 bytes, as the scratch map costs a
		// helper call on every event.
		OnStackLimit:    512,
		PrintMapsOnExit: true,
		ShowDebugInfo:   true,
		UseBlazesym:     true,
		StackMode:       "bpftrace",
		StrTruncTrailer: "..",
		Unstable: map[string]string{
			"unstable_dw_ustack":        "warn",
			"unstable_import_statement": "error",
			"unstable_tseries":          "warn",
			"unstable_typeinfo":         "error",
		},
	}
}

// maxStrlen bounds max_strlen: a string lives in the per-CPU scratch
// area, and a map key or value holding one may not exceed what the
// kernel allocates per CPU (32 KiB).
const maxStrlen = 16 << 10

// configValue is a config setting's value as a script or the environment
// gives it: a word (str), or an integer (num, isNum).
type configValue struct {
	str   string
	num   uint64
	isNum bool
}

// option is one config setting: how it is set and how config() reads it.
type option struct {
	set func(*Config, configValue) error
	get func(*Config) any // int64, string or bool
}

// options are bpftrace's config settings, by short name.
var options = map[string]option{
	"cache_user_symbols": wordOption(func(c *Config) *string { return &c.CacheUserSymbols },
		"Invalid value for cache_user_symbols: valid values are PER_PID, PER_PROGRAM, and NONE.",
		map[string]string{"per_pid": "PER_PID", "per_program": "PER_PROGRAM", "none": "NONE", "0": "NONE", "1": ""}),
	"cpp_demangle":       boolOption(func(c *Config) *bool { return &c.CppDemangle }),
	"lazy_symbolication": boolOption(func(c *Config) *bool { return &c.LazySymbolication }),
	"license":            {set: setLicense, get: func(c *Config) any { return c.License }},
	"log_size":           intOption(func(c *Config) *int { return &c.LogSize }, 1, math.MaxUint32),
	"max_bpf_progs":      intOption(func(c *Config) *int { return &c.MaxBPFProgs }, 1, math.MaxUint32),
	"max_cat_bytes":      intOption(func(c *Config) *int { return &c.MaxCatBytes }, 1, math.MaxUint32),
	"max_map_keys":       intOption(func(c *Config) *int { return &c.MaxMapKeys }, 1, math.MaxUint32),
	"max_probes":         intOption(func(c *Config) *int { return &c.MaxProbes }, 1, math.MaxUint32),
	"max_strlen":         intOption(func(c *Config) *int { return &c.MaxStrlen }, 1, maxStrlen),
	"missing_probes": wordOption(func(c *Config) *string { return &c.MissingProbes },
		"Invalid value for missing_probes: valid values are ignore, warn, and error.",
		map[string]string{"ignore": "ignore", "warn": "warn", "error": "error"}),
	"on_stack_limit":     intOption(func(c *Config) *int { return &c.OnStackLimit }, 0, math.MaxInt32),
	"perf_rb_pages":      intOption(func(c *Config) *int { return &c.PerfRBPages }, 0, 1<<18), // a ring buffer of up to 1 GiB
	"print_maps_on_exit": boolOption(func(c *Config) *bool { return &c.PrintMapsOnExit }),
	"show_debug_info":    boolOption(func(c *Config) *bool { return &c.ShowDebugInfo }),
	"stack_mode": wordOption(func(c *Config) *string { return &c.StackMode },
		"Invalid value for stack_mode: valid values are bpftrace, perf, raw, and build_id.",
		map[string]string{"bpftrace": "bpftrace", "perf": "perf", "raw": "raw", "build_id": "build_id"}),
	"str_trunc_trailer": {
		set: func(c *Config, v configValue) error { c.StrTruncTrailer = v.String(); return nil },
		get: func(c *Config) any { return c.StrTruncTrailer },
	},
	"use_blazesym":              boolOption(func(c *Config) *bool { return &c.UseBlazesym }),
	"unstable_dw_ustack":        unstableOption("unstable_dw_ustack"),
	"unstable_import_statement": unstableOption("unstable_import_statement"),
	"unstable_tseries":          unstableOption("unstable_tseries"),
	"unstable_typeinfo":         unstableOption("unstable_typeinfo"),
}

// renamed are the settings bpftrace 0.17 spelled otherwise, with their
// current names.
var renamed = map[string]string{
	"strlen":          "max_strlen",
	"no_cpp_demangle": "cpp_demangle",
	"cat_bytes_max":   "max_cat_bytes",
	"map_keys_max":    "max_map_keys",
}

// envOnly are the BPFTRACE_* variables that are no config settings.
var envOnly = []string{"btf", "kernel_build", "kernel_source", "vmlinux"}

// deprecated are settings bpftrace once had and now ignores.
var deprecated = []string{"symbol_source", "max_type_res_iterations", "unstable_addr",
	"unstable_import", "unstable_macro", "unstable_map_decl"}

// licenses are the licenses the kernel lets a tracing program have, in
// the order bpftrace lists them.
var licenses = []string{"Dual MIT/GPL", "Dual BSD/GPL", "Dual MPL/GPL", "GPL and additional rights", "GPL v2", "GPL"}

func (v configValue) String() string {
	if v.isNum {
		return strconv.FormatUint(v.num, 10)
	}
	return v.str
}

// uint reads v as an unsigned integer, as bpftrace does a word too.
func (v configValue) uint() (uint64, bool) {
	if v.isNum {
		return v.num, true
	}
	n, err := strconv.ParseUint(v.str, 0, 64)
	return n, err == nil
}

func intOption(field func(*Config) *int, lo, hi uint64) option {
	return option{
		set: func(c *Config, v configValue) error {
			n, ok := v.uint()
			if !ok {
				return fmt.Errorf("expecting a number, got %s", v)
			}
			if n < lo || n > hi {
				return fmt.Errorf("%d is out of range: want %d to %d", n, lo, hi)
			}
			*field(c) = int(n)
			return nil
		},
		get: func(c *Config) any { return int64(*field(c)) },
	}
}

func boolOption(field func(*Config) *bool) option {
	return option{
		set: func(c *Config, v configValue) error {
			b, ok := parseBool(v)
			if !ok {
				return errors.New("Invalid bool value: valid values are true, false, 1 or 0.")
			}
			*field(c) = b
			return nil
		},
		get: func(c *Config) any { return *field(c) },
	}
}

// parseBool reads a bool setting: any integer but 0 is true.
func parseBool(v configValue) (bool, bool) {
	if v.isNum {
		return v.num != 0, true
	}
	switch strings.ToLower(v.str) {
	case "true", "1", "on", "yes":
		return true, true
	case "false", "0", "off", "no":
		return false, true
	}
	return false, false
}

// wordOption is a setting taking one of words (lower-cased keys), each
// stored as its value; an empty value keeps the setting as it is.
func wordOption(field func(*Config) *string, msg string, words map[string]string) option {
	return option{
		set: func(c *Config, v configValue) error {
			w, ok := words[strings.ToLower(v.String())]
			if !ok {
				return errors.New(msg)
			}
			if w != "" {
				*field(c) = w
			}
			return nil
		},
		get: func(c *Config) any { return *field(c) },
	}
}

func unstableOption(key string) option {
	return option{
		set: func(c *Config, v configValue) error {
			w := strings.ToLower(v.String())
			b, isBool := parseBool(v)
			switch {
			case w == "enable" || isBool && b:
				w = "enable"
			case w == "error" || isBool && !b:
				w = "error"
			case w != "warn":
				return errors.New("Invalid value for unstable config: valid values are enable, warn, and error.")
			}
			c.Unstable = maps.Clone(c.Unstable) // never the defaults' map
			c.Unstable[key] = w
			return nil
		},
		get: func(c *Config) any { return c.Unstable[key] },
	}
}

// licenseError is a license the kernel would not accept; bpftrace names
// no setting in its message.
type licenseError string

func (e licenseError) Error() string {
	return fmt.Sprintf("Invalid value for license. Found: %s. Valid values: %s. "+
		"Read more about BPF programs and licensing: "+
		"https://docs.kernel.org/bpf/bpf_licensing.html#using-bpf-programs-in-the-linux-kernel",
		string(e), strings.Join(licenses, ", "))
}

func setLicense(c *Config, v configValue) error {
	s := v.String()
	if !slices.Contains(licenses, s) || v.isNum {
		return licenseError(s)
	}
	c.License = s
	return nil
}

// lookupOption finds the setting key names, short or with the BPFTRACE_
// prefix, in either case; err says why there is none.
func lookupOption(key string) (option, error) {
	name := strings.TrimPrefix(strings.ToLower(key), "bpftrace_")
	if o, ok := options[name]; ok {
		return o, nil
	}
	switch {
	case renamed[name] != "":
		return option{}, fmt.Errorf("%s: key has been renamed to '%s'", key, renamed[name])
	case slices.Contains(envOnly, name):
		return option{}, fmt.Errorf("%s: can only be set as an environment variable", key)
	}
	return option{}, fmt.Errorf("%s: not a known configuration option", key)
}

// configure returns base with the script's config block and then the
// BPFTRACE_* environment applied: the environment takes precedence, as
// in bpftrace. Settings base leaves zero take bpftrace's defaults.
// Errors in the block are located at their entry; the environment's have
// no place to point at. A deprecated setting is a warning.
func configure(base Config, env func(string) (string, bool), block []*ast.ConfigEntry) (Config, diag.List) {
	cfg := withDefaults(base)
	var errs diag.List
	for _, e := range block {
		if slices.Contains(deprecated, strings.TrimPrefix(strings.ToLower(e.Key), "bpftrace_")) {
			errs.Warn(e.Span(), "%s: config setting is deprecated and has no effect", e.Key)
			continue
		}
		if err := configEntry(&cfg, e); err != nil {
			errs.Add(e.Span(), "%v", err)
		}
	}
	if env != nil {
		configureEnv(&cfg, env, &errs)
	}
	return cfg, errs
}

// configureEnv applies the BPFTRACE_* environment to cfg, and warns of
// the variables it does not follow.
func configureEnv(cfg *Config, env func(string) (string, bool), errs *diag.List) {
	nowhere := token.Span{Start: token.NoPos, End: token.NoPos}
	// In a fixed order, so that errors come out the same way each run.
	for _, key := range slices.Sorted(maps.Keys(options)) {
		name := "BPFTRACE_" + strings.ToUpper(key)
		v, ok := env(name)
		if !ok {
			continue
		}
		if err := options[key].set(cfg, configValue{str: v}); err != nil {
			errs.Add(nowhere, "%s: %v", name, err)
		}
	}
	for _, key := range slices.Sorted(maps.Keys(ignoredEnv)) {
		name := "BPFTRACE_" + strings.ToUpper(key)
		if _, ok := env(name); ok {
			errs.Warn(nowhere, "%s is ignored: %s", name, ignoredEnv[key])
		}
	}
}

// ignoredEnv are the BPFTRACE_* variables, by their setting's name, that
// bpftrace 0.17 or HEAD read and gtrace does not, with why.
var ignoredEnv = func() map[string]string {
	m := map[string]string{
		"btf":             "gtrace takes kernel types from the running kernel's BTF",
		"vmlinux":         "gtrace takes kernel symbols from /proc/kallsyms",
		"kernel_source":   "gtrace reads no kernel headers",
		"kernel_build":    "gtrace reads no kernel headers",
		"no_user_symbols": "bpftrace 0.17's setting is gone",
	}
	for old, to := range renamed {
		m[old] = "it has been renamed to BPFTRACE_" + strings.ToUpper(to)
	}
	for _, old := range deprecated {
		m[old] = "the setting is deprecated and has no effect"
	}
	return m
}()

// withDefaults fills the settings cfg leaves zero with bpftrace's
// defaults: the three integers, none of which may be zero, missing_probes
// and, when it has no license, every Settings field.
func withDefaults(cfg Config) Config {
	def := DefaultConfig()
	for _, p := range []struct{ got, def *int }{
		{&cfg.MaxStrlen, &def.MaxStrlen}, {&cfg.MaxMapKeys, &def.MaxMapKeys}, {&cfg.MaxProbes, &def.MaxProbes},
	} {
		if *p.got == 0 {
			*p.got = *p.def
		}
	}
	if cfg.MissingProbes == "" {
		cfg.MissingProbes = def.MissingProbes
	}
	if cfg.License == "" {
		cfg.Settings = def.Settings
	}
	return cfg
}

// configEntry applies one entry of a script's config block.
func configEntry(cfg *Config, e *ast.ConfigEntry) error {
	o, err := lookupOption(e.Key)
	if err != nil {
		return err
	}
	var v configValue
	switch x := e.Value.(type) {
	case *ast.Ident:
		v.str = x.Name
	case *ast.StrLit:
		v.str = x.Value
	case *ast.BoolLit:
		v.str = strconv.FormatBool(x.Value)
	case *ast.IntLit:
		v.num, v.isNum = x.Value, true
	default:
		return fmt.Errorf("%s: the value must be an integer, a string or a word", e.Key)
	}
	if err := o.set(cfg, v); err != nil {
		var le licenseError
		if errors.As(err, &le) {
			return err
		}
		return fmt.Errorf("%s: %w", e.Key, err)
	}
	return nil
}

// checkProgCount refuses more BPF programs than max_bpf_progs, at the
// attach point of the first one too many.
func (c *checker) checkProgCount() {
	limit := c.opts.Config.MaxBPFProgs
	if len(c.info.Progs) <= limit {
		return
	}
	c.errorf(c.info.Progs[limit].Attach, "Your program is trying to generate more than %d BPF programs, which exceeds the current limit of %d; "+
		"you can increase the limit through the BPFTRACE_MAX_BPF_PROGS environment variable.", limit, limit)
}

// unstable checks a use of the unstable feature that the setting key
// governs: an error at n unless enabled, or a warning, given once.
func (c *checker) unstable(n ast.Node, key, feature string) {
	switch c.opts.Config.Unstable[key] {
	case "error":
		c.errorf(n, "%s feature is not enabled by default. To enable this unstable feature, set the config flag to enable. %s=enable", feature, key)
	case "warn":
		msg := fmt.Sprintf("Script is using an unstable feature: %s. To prevent this warning you must explicitly enable it in the config e.g. %s=enable", feature, key)
		if c.quiet || slices.ContainsFunc(c.errs, func(e *diag.Error) bool { return e.Msg == msg }) {
			return
		}
		c.errs.Warn(token.Span{Start: token.NoPos, End: token.NoPos}, "%s", msg)
	}
}
