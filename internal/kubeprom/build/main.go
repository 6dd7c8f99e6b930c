// Command build builds the Prometheus with Kubernetes discovery that the
// tests of tests/fleet run, into its cache directory, unless it is
// there. CI runs it before go test:
//
//	go run ./internal/kubeprom/build
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"gtrace/internal/kubeprom"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	path, err := kubeprom.Build(ctx, os.Stderr)
	if err != nil {
		fmt.Fprintln(os.Stderr, "build:", err)
		os.Exit(1)
	}
	fmt.Println(path)
}
