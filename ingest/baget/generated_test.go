package baget_test

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/traceduck/traceduck/ingest/baget"
	"github.com/traceduck/traceduck/internal/tracegen"
	"github.com/traceduck/traceduck/schema"
)

// TestReaderIndexesGeneratedLogs: the reader and the generator agree on
// the container: every generated log (both ABIs, wrapped and not) opens
// without a finding, its secondary index holds exactly the generator's
// events, per event type, and a wrapped log reports its lost blocks.
func TestReaderIndexesGeneratedLogs(t *testing.T) {
	for _, abi := range []string{"le32", "be64"} {
		for _, ring := range []int{0, 12} {
			t.Run(fmt.Sprintf("%s-ring%d", abi, ring), func(t *testing.T) {
				log, descXML, truth, err := tracegen.GenerateBaget(tracegen.BagetConfig{Events: 4000, CPUs: 2, Seed: 3, ABI: abi, RingBlocks: ring})
				if err != nil {
					t.Fatal(err)
				}
				if ring > 0 && (!truth.Wrapped || truth.FirstBlock == 0) {
					t.Fatalf("the ring log did not wrap (first block %d)", truth.FirstBlock)
				}
				desc, err := baget.Parse("minirtos.xml", descXML)
				if err != nil {
					t.Fatal(err)
				}
				var findings []string
				l, err := baget.Open(bytes.NewReader(log), int64(len(log)), "gen.log", desc, func(sev schema.Severity, off int64, msg string) error {
					findings = append(findings, fmt.Sprintf("%s @%d: %s", sev, off, msg))
					return nil
				})
				if err != nil {
					t.Fatal(err)
				}
				if len(findings) > 0 {
					t.Errorf("findings on a generated log:\n%v", findings)
				}
				if len(l.Events) != truth.Events {
					t.Fatalf("%d events indexed, generator wrote %d", len(l.Events), truth.Events)
				}
				counts := map[string]int{}
				for _, i := range l.Events {
					counts[desc.Events[l.Index[i].Ev].Name]++
				}
				for name, n := range truth.EventCounts {
					if counts[name] != n {
						t.Errorf("%s: %d indexed, %d written", name, counts[name], n)
					}
				}
				if l.Wrapped != truth.Wrapped || l.FirstBlock != uint64(truth.FirstBlock) {
					t.Errorf("wrapped %v first block %d, truth %v %d", l.Wrapped, l.FirstBlock, truth.Wrapped, truth.FirstBlock)
				}
			})
		}
	}
}
