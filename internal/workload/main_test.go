package workload_test

import (
	"os"
	"testing"

	"github.com/pgarena/pgarena/internal/pgtest"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }
