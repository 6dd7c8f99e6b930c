package tools

import (
	"testing"

	"gtrace/tests/internal/harness"
)

func TestMain(m *testing.M) { harness.Main(m) }
