package dbtest

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// AddSeeds adds every file matching the glob patterns to a fuzz target's
// seed corpus. With limit > 0 a file longer than limit bytes is cut to its
// lines within the first limit bytes (at limit itself when there is no
// line end before it): the fuzzer minimizes every input it finds
// interesting, which takes minutes from a large one. A pattern that
// matches nothing adds nothing (external traces may be absent); a file
// that cannot be read fails the target.
func AddSeeds(f *testing.F, limit int, patterns ...string) {
	f.Helper()
	for _, pattern := range patterns {
		paths, err := filepath.Glob(pattern)
		if err != nil {
			f.Fatal(err)
		}
		for _, p := range paths {
			data, err := os.ReadFile(p)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(seedHead(data, limit))
		}
	}
}

func seedHead(data []byte, limit int) []byte {
	if limit <= 0 || len(data) <= limit {
		return data
	}
	head := data[:limit]
	if i := bytes.LastIndexByte(head, '\n'); i >= 0 {
		return head[:i+1]
	}
	return head
}
