// Package safety_test holds the data-safety tests of the traceduck
// command (docs/bad-input.md): killed and interrupted ingests into
// databases and Parquet datasets, full disks, a second writer, extreme
// runs beside others, devices and FIFOs, out of memory. They run the
// binary as a user does (internal/clitest), in a package of their own:
// with cmd/traceduck's tests in one package, a loaded 2-core machine took
// it past go test's 10-minute limit per package.
package safety_test

import (
	"flag"
	"testing"

	"github.com/traceduck/traceduck/internal/clitest"
)

func TestMain(m *testing.M) {
	flag.Parse()
	clitest.Main(m)
}
