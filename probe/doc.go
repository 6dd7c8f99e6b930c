// Package probe knows the providers of attach points: how each spells its
// attach points, which BPF program type it runs, what context its programs
// see, and how it attaches. Each provider lives in its own file and is
// listed once, in providers.
package probe
