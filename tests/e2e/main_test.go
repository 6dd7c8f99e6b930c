package e2e

import (
	"testing"

	"gtrace/tests/internal/harness"
)

func TestMain(m *testing.M) { harness.Main(m) }
