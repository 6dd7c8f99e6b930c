// Package codegen turns a checked program into BPF bytecode: one program
// per concrete probe, and the maps they share, as a deterministic
// ebpf.CollectionSpec. Nothing here touches the kernel; loading waits for
// the runtime.
//
// Generated code keeps the probe's context in R6 and a pointer to the
// program's per-CPU scratch area in R9. Integers travel in R0 and spill to
// 8-byte slots on the BPF stack; strings, tuples, map keys and events are
// built in the scratch area at offsets fixed at compile time. A program
// whose scratch fits below its slots, and that has no loop callbacks,
// keeps it on the 512-byte BPF stack instead, sparing a map lookup per
// event; one that needs no scratch does without.
package codegen
