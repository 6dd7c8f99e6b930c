// Package testnet holds what tests need of the network on loopback: a
// free address, and a real Prometheus started on one and asked through
// its HTTP API. It is apart from internal/testutils because the net
// package links test binaries dynamically (cgo's resolver), and
// internal/vmtest runs static test binaries in its guests.
package testnet
