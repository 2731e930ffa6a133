package baget

import (
	"bytes"
	"testing"
	"time"

	"github.com/traceduck/traceduck/internal/dbtest"
)

// FuzzDescription: any bytes as a description parse or fail with an error,
// without panicking, in bounded time.
func FuzzDescription(f *testing.F) {
	dbtest.AddSeeds(f, 0, "testdata/*.xml")
	for _, c := range append(badCases, formatBadCases...) {
		f.Add([]byte(c.xml()))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		start := time.Now()
		d, err := Parse("fuzz.xml", data)
		if err == nil {
			var b bytes.Buffer
			d.Dump(&b)
			for _, ev := range d.Events {
				if ev.Size > maxSizeof || ev.Size < 0 {
					t.Fatalf("event %s: size %d out of bounds", ev.Name, ev.Size)
				}
			}
		}
		if el := time.Since(start); el > 2*time.Second {
			t.Fatalf("Parse took %v", el)
		}
	})
}
