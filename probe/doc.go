// Package probe knows the providers of attach points: each provider's
// names, how it spells and expands its attach points, which BPF program
// type it runs, what context its programs see (Context) and which
// context builtins they can read, how it attaches, and how -l lists its
// probes. Each provider lives in its own file and registers itself; the
// checker and code generation ask the probe, never its kind.
package probe
