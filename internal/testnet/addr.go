package testnet

import (
	"net"
	"testing"
)

// FreeAddr returns a loopback address with a port that was free a
// moment ago.
func FreeAddr(tb testing.TB) string {
	tb.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}
