package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync/atomic"

	"gtrace/compiler"
	"gtrace/metrics"
	"gtrace/runtime"
)

// standingScripts reads the *.bt files of dir, in the order of their
// names, and returns them joined into one program, which the agent runs
// from its start: one set of maps, one exposition on /metrics. Each
// file must compile alone, and no two may use a map of the same name,
// which the joined program would share.
func standingScripts(dir string) (string, error) {
	paths, err := filepath.Glob(filepath.Join(dir, "*.bt"))
	if err != nil {
		return "", err
	}
	if len(paths) == 0 {
		return "", fmt.Errorf("--scripts: no *.bt file in %s", dir)
	}
	sort.Strings(paths)
	var joined strings.Builder
	owner := map[string]string{} // map name: the file that uses it
	for _, path := range paths {
		src, err := os.ReadFile(path)
		if err != nil {
			return "", fmt.Errorf("--scripts: %w", err)
		}
		name := filepath.Base(path)
		prog, err := compiler.Compile(src, &compiler.Options{Name: name})
		if err != nil {
			var located *compiler.Error
			if errors.As(err, &located) {
				var b strings.Builder
				located.Render(&b)
				return "", fmt.Errorf("--scripts: %s does not compile:\n%s", name, strings.TrimRight(b.String(), "\n"))
			}
			return "", fmt.Errorf("--scripts: %s: %w", name, err)
		}
		for _, l := range prog.Output.SortedMaps() {
			if other, ok := owner[l.Name]; ok {
				return "", fmt.Errorf("--scripts: %s and %s both use the map %s: rename it in one", other, name, l.Name)
			}
			owner[l.Name] = name
		}
		fmt.Fprintf(&joined, "// %s\n%s\n", name, src)
	}
	return joined.String(), nil
}

// standingMetrics answers /metrics with the maps of the standing
// program, through the metrics server of gtrace serve once the program
// is compiled, and 503 before.
type standingMetrics struct {
	server atomic.Pointer[metrics.Server]
}

func (s *standingMetrics) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	server := s.server.Load()
	if server == nil {
		http.Error(w, "the standing scripts are not running yet", http.StatusServiceUnavailable)
		return
	}
	server.ServeHTTP(w, r)
}

// runStanding runs program until ctx ends, its output and diagnostics
// on stderr, its maps on m.
func runStanding(ctx context.Context, program string, m *standingMetrics, stderr io.Writer) error {
	o := &options{format: "text", program: program}
	o.serve = func(prog *compiler.Program, ropts *runtime.Options) error {
		exporter, err := metrics.NewExporter(prog, 0, stderr)
		if err != nil {
			return err
		}
		server := metrics.NewServer(exporter)
		m.server.Store(server)
		ropts.Snapshots = server.SetReader
		ropts.Wait = func() { <-ctx.Done() }
		return nil
	}
	err := trace(o, stderr, stderr)
	if ec, ok := err.(exitCode); ok && ec != 0 {
		return fmt.Errorf("the standing scripts ended with exit code %d", int(ec))
	}
	return err
}
