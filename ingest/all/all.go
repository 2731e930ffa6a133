// Package all registers every trace format; import it for its side effect.
package all

import (
	_ "github.com/traceduck/traceduck/ingest/baget"  // Baget-model binary RTOS logs with an XML description
	_ "github.com/traceduck/traceduck/ingest/btf"    // BTF
	_ "github.com/traceduck/traceduck/ingest/chrome" // Chrome trace event JSON (chrome://tracing, Perfetto, Trace Compass)
	_ "github.com/traceduck/traceduck/ingest/dtrace" // DTrace and bpftrace output: event lines, aggregations
	_ "github.com/traceduck/traceduck/ingest/ftrace" // Linux ftrace text, trace-cmd report
	_ "github.com/traceduck/traceduck/ingest/qnx"    // QNX traceprinter text and .kev
	_ "github.com/traceduck/traceduck/ingest/tlv"    // TLV standard format, conversion rules, TOPPERS ASP/FMP
)
