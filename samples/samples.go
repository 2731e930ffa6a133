// Package samples holds the traces bundled in the binary for
// `traceduck demo`.
package samples

import (
	"embed"

	"github.com/traceduck/traceduck/internal/tracegen"
)

// FS holds the sample traces, one directory per format.
//
//go:embed btf/*.btf
var FS embed.FS

// Sample is one bundled trace.
type Sample struct {
	Path        string // in FS
	Format      string
	Name        string // run name
	Description string
}

// List returns the bundled samples in the order the demo ingests them.
func List() []Sample {
	return []Sample{
		{Path: "btf/rtos-2core.btf", Format: "btf", Name: "btf-rtos-2core",
			Description: "a simulated 2-core fixed-priority RTOS: periodic tasks, a tick ISR per core, runnables, a shared semaphore, a signal and an event"},
		{Path: "btf/seed-example.btf", Format: "btf", Name: "btf-seed-example",
			Description: "the example listing of the BTF chapter: one task activated, started and terminated, and a runnable"},
	}
}

// GeneratedSample is a sample written by the trace generator; the test
// checks that the committed file is what the generator writes, and
// `go run ./samples/internal/gen` rewrites it.
type GeneratedSample struct {
	Path   string
	Config tracegen.Config
}

// Generated lists the generated samples.
func Generated() []GeneratedSample {
	return []GeneratedSample{
		{Path: "btf/rtos-2core.btf", Config: tracegen.Config{Events: 4000, Cores: 2, Tasks: 5, Seed: 7, TimeScale: "ns"}},
	}
}
