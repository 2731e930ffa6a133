// Package btf reads BTF (Best Trace Format) traces: a header of #name value
// attributes, then one event per line
// time,source,sourceInstance,targetType,target,targetInstance,action[,note].
package btf

import (
	"context"
	"errors"

	"github.com/traceduck/traceduck/ingest"
	"github.com/traceduck/traceduck/schema"
)

func init() { ingest.Register(10, Ingester{}) }

// Ingester reads BTF.
type Ingester struct{}

// Format describes BTF.
func (Ingester) Format() ingest.Format {
	return ingest.Format{Name: "btf", Description: "BTF (Best Trace Format) system traces: tasks, ISRs, runnables, semaphores, signals, cores", Patterns: []string{"*.btf"}}
}

// Sniff reports whether head looks like BTF.
func (Ingester) Sniff(head []byte) bool { return false }

// Ingest reads a BTF trace into w.
func (Ingester) Ingest(ctx context.Context, src *ingest.Source, w *schema.RunWriter) error {
	return errors.New("btf: not yet")
}
