// Package samples holds the traces bundled in the binary for
// `traceduck demo`.
package samples

import "embed"

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
		{Path: "btf/seed-example.btf", Format: "btf", Name: "btf-seed-example",
			Description: "the example listing of the BTF chapter: one task activated, started, and a runnable"},
	}
}
