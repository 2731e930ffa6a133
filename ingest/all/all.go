// Package all registers every trace format; import it for its side effect.
package all

import (
	_ "github.com/traceduck/traceduck/ingest/btf" // BTF
)
