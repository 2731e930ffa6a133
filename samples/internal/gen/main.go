// Command gen writes the generated sample traces of the demo:
//
//	go run ./samples/internal/gen
package main

import (
	"bytes"
	"log"
	"os"
	"path/filepath"

	"github.com/traceduck/traceduck/samples"
)

func main() {
	for _, g := range samples.Generated() {
		var b bytes.Buffer
		if err := g.Write(&b); err != nil {
			log.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Dir("samples/"+g.Path), 0o755); err != nil {
			log.Fatal(err)
		}
		if err := os.WriteFile("samples/"+g.Path, b.Bytes(), 0o644); err != nil {
			log.Fatal(err)
		}
	}
}
