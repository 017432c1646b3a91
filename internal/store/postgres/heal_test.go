package postgres_test

import (
	"testing"

	"github.com/cuahq/cua/internal/store/storetest"
)

// TestHealConformance runs the heal store's conformance tests on PostgreSQL.
func TestHealConformance(t *testing.T) { storetest.RunHeal(t, harness) }
