package baget

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// FuzzDescription: any bytes as a description parse or fail with an error,
// without panicking, in bounded time.
func FuzzDescription(f *testing.F) {
	files, _ := filepath.Glob("testdata/*.xml")
	for _, name := range files {
		if data, err := os.ReadFile(name); err == nil {
			f.Add(data)
		}
	}
	for _, c := range badCases {
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
