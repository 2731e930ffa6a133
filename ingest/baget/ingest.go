package baget

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/traceduck/traceduck/ingest"
	"github.com/traceduck/traceduck/schema"
)

// maxDescSize bounds a description file (docs 3).
const maxDescSize = 16 << 20

// Ingester reads Baget-model binary logs (docs/baget-format.md).
type Ingester struct {
	description string // --description; "" to look next to the log
}

// The container is recognized strictly by its magic, before the lenient
// text formats.
func init() { ingest.Register(4, &Ingester{}) }

// Format describes the Baget-model log.
func (*Ingester) Format() ingest.Format {
	return ingest.Format{Name: "baget", Description: "self-described binary RTOS trace (Baget tracer model) read through an XML description",
		Patterns: []string{"*.blog"}, Offsets: true}
}

// Sniff recognizes the header magic.
func (*Ingester) Sniff(head []byte) bool { return bytes.HasPrefix(head, []byte(Magic)) }

// Params lists --description.
func (*Ingester) Params() []ingest.Param {
	return []ingest.Param{{Name: "description", Help: "baget: the XML description of the log's records (default: OS_VERSION-ARCH.xml next to the log, then the bundled ones)"}}
}

// With takes --description.
func (*Ingester) With(params map[string]string) (ingest.Ingester, error) {
	for k := range params {
		if k != "description" {
			return nil, fmt.Errorf("format baget takes no --%s", k)
		}
	}
	return &Ingester{description: params["description"]}, nil
}

// Ingest reads the header, finds and parses the description, then reads
// the log once, block by block, into the machine: bad records go to
// BadOffset (so --skip-bad applies), warnings to diagnostics, in file
// order. Memory holds one block and the machine's state (objects, CPUs),
// not the log, so it does not grow with the log's length.
//
// With the size unknown (standard input), a log cut inside a block or
// with fewer blocks than service_blocks is found at its end, after the
// records before it.
func (g *Ingester) Ingest(ctx context.Context, src *ingest.Source, w *schema.RunWriter) error {
	s, err := NewScanner(src, src.Size, src.Name)
	if err != nil {
		return err
	}
	desc, found, err := g.findDescription(src.Name, s.Header)
	if err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	w.SetMeta("os_version", s.OS)
	w.SetMeta("arch", s.Arch)
	w.SetMeta("description", desc.File)
	switch found {
	case foundBeside:
		w.SetMeta("found_beside", desc.File)
	case foundBundled:
		w.SetMeta("found_bundled", desc.File)
	}
	w.SetMeta("wrapped", false) // set after the scan; here for the order of the keys
	w.SetMeta("first_block", uint64(0))
	m := newMachine(w, desc)
	m.start()
	n := 0
	err = s.Scan(desc, func(sev schema.Severity, off int64, msg string) error {
		if sev == schema.Error {
			return w.BadOffset(off, "%s", msg)
		}
		w.Diag(sev, off, schema.NoSeq, msg)
		return nil
	}, func(e Entry, rec []byte, service bool) error {
		if n++; n&(1<<14-1) == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		return m.visit(e, rec, service)
	})
	if err != nil {
		return err
	}
	w.SetMeta("wrapped", s.Wrapped)
	w.SetMeta("first_block", s.FirstBlock)
	return nil
}

// Where a description came from when --description did not name it: the
// ingest line says which file it read (as TLV names the .res it took).
const (
	foundGiven   = iota // --description
	foundBeside         // OS_VERSION-ARCH.xml next to the log
	foundBundled        // a description bundled with traceduck
)

// findDescription returns the description and where it was found:
// --description; else OS_VERSION-ARCH.xml next to the log (docs 1.1);
// else a bundled one for that OS and architecture. Standard input needs
// --description.
func (g *Ingester) findDescription(name string, h Header) (*Description, int, error) {
	if g.description != "" {
		d, err := readDescription(g.description)
		return d, foundGiven, err
	}
	if name == "-" {
		return nil, 0, errors.New("baget: a log on standard input needs --description FILE.xml")
	}
	want := filepath.Join(filepath.Dir(name), h.OS+"-"+h.Arch+".xml")
	if strings.ContainsAny(h.OS+h.Arch, `/\`) {
		want = ""
	}
	if want != "" {
		if _, err := os.Stat(want); err == nil {
			d, err := readDescription(want)
			return d, foundBeside, err
		}
	}
	entries, _ := fs.ReadDir(examples, "examples")
	for _, e := range entries {
		d, err := Example(e.Name())
		if err == nil && d.OS == h.OS && d.Arch == h.Arch {
			return d, foundBundled, nil
		}
	}
	return nil, 0, fmt.Errorf("%s: no description for os %q arch %q: give --description FILE.xml (looked for %s and the bundled descriptions)", name, h.OS, h.Arch, want)
}

func readDescription(path string) (*Description, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxDescSize+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(data) > maxDescSize {
		return nil, fmt.Errorf("%s: a description of at most %d bytes expected, found more", path, maxDescSize)
	}
	return Parse(path, data)
}
