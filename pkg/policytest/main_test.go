package policytest_test

import (
	"os"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/accelc/accelc/pkg/policytest"
	"github.com/accelc/accelc/pkg/policytest/engine"
)

// TestMain puts this test binary on PATH as the engine command, which
// RunRego, Suite and RunSuite start.
func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		policytest.EngineCommand: func() { os.Exit(engine.Command()) },
	})
}
