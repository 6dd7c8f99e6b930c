// Command build builds the kube-apiserver and kubectl that the tests of
// internal/kubeapi run, into their cache directory, unless they
// are there. CI runs it before go test:
//
//	go run ./internal/kubeapi/build
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"gtrace/internal/kubeapi"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	dir, err := kubeapi.Build(ctx, os.Stderr)
	if err != nil {
		fmt.Fprintln(os.Stderr, "build:", err)
		os.Exit(1)
	}
	fmt.Println(dir)
}
