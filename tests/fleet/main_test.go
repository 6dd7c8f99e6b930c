// Package fleet tests gtrace agent and kubectl gtrace against a real
// API server, with gtrace agent processes standing for the pods of the
// DaemonSet on simulated nodes.
package fleet

import (
	"testing"

	"gtrace/tests/internal/harness"
)

func TestMain(m *testing.M) { harness.Main(m) }
