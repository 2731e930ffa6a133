// Package ingest holds what every trace format shares: the Ingester
// interface, the registry that detects a file's format by trying each
// format in a fixed order, the Source a trace is read from, and the line
// reader of the text formats. Each format lives in a package of its own
// under ingest/ and registers itself; ingest/all imports them all.
package ingest

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"os"
	"slices"
	"sort"
	"strings"
	"sync/atomic"

	"github.com/traceduck/traceduck/schema"
)

// Format describes a trace format.
type Format struct {
	Name        string   // what --format takes
	Description string   // one line
	Patterns    []string // usual file names, e.g. "*.btf"
	// Offsets: events.src_line holds byte offsets, not line numbers
	// (binary formats, Chrome JSON); errors read FILE@OFFSET.
	Offsets bool
}

// Ingester reads one trace and writes it into a run.
type Ingester interface {
	Format() Format
	// Sniff reports whether the first bytes of a file (up to SniffSize)
	// look like this format.
	Sniff(head []byte) bool
	Ingest(ctx context.Context, src *Source, w *schema.RunWriter) error
}

// Configurable is an Ingester that takes format flags: TLV needs its
// resource file and rule directories, for instance. The command line
// offers every Param of every format as a flag.
type Configurable interface {
	Ingester
	// Params lists the flags the format takes.
	Params() []Param
	// With returns the ingester set up with the flags given (name →
	// value; absent flags are absent). It is called even with none, so
	// that a format can say which flag it needs.
	With(params map[string]string) (Ingester, error)
}

// Param is one format flag.
type Param struct {
	Name string // the flag, without "--"
	Help string
}

// ParamError is a format flag given to a format that does not take it: a
// mistake in how traceduck was called (the command line's usage error),
// not in the trace.
type ParamError struct {
	Format, Param string
	Takes         []string // the flags the format takes
}

func (e *ParamError) Error() string {
	if len(e.Takes) == 0 {
		return fmt.Sprintf("format %s takes no --%s (it takes no format flag)", e.Format, e.Param)
	}
	return fmt.Sprintf("format %s takes no --%s (it takes --%s)", e.Format, e.Param, strings.Join(e.Takes, ", --"))
}

// Configure returns ing set up with params; a flag the format does not
// take is a *ParamError.
func Configure(ing Ingester, params map[string]string) (Ingester, error) {
	var takes []string
	c, ok := ing.(Configurable)
	if ok {
		for _, p := range c.Params() {
			takes = append(takes, p.Name)
		}
	}
	names := make([]string, 0, len(params))
	for name := range params {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		if !slices.Contains(takes, name) {
			return nil, &ParamError{Format: ing.Format().Name, Param: name, Takes: takes}
		}
	}
	if ok {
		return c.With(params)
	}
	return ing, nil
}

// SniffSize is how many bytes of a file the sniffers see.
const SniffSize = 8192

type registered struct {
	order int
	ing   Ingester
}

var registry []registered

// Register adds a format. order fixes where it stands in the detection
// chain: lower first, so that a format whose sniffer is strict comes
// before one that is lenient.
func Register(order int, ing Ingester) {
	for _, r := range registry {
		if r.ing.Format().Name == ing.Format().Name {
			panic("ingest: format registered twice: " + ing.Format().Name)
		}
	}
	registry = append(registry, registered{order, ing})
	sort.SliceStable(registry, func(i, j int) bool { return registry[i].order < registry[j].order })
}

// Ingesters returns the registered formats in detection order.
func Ingesters() []Ingester {
	out := make([]Ingester, len(registry))
	for i, r := range registry {
		out[i] = r.ing
	}
	return out
}

// Lookup returns the ingester of a format by name.
func Lookup(name string) (Ingester, error) {
	var names []string
	for _, r := range registry {
		if strings.EqualFold(r.ing.Format().Name, name) {
			return r.ing, nil
		}
		names = append(names, r.ing.Format().Name)
	}
	return nil, fmt.Errorf("unknown format %q (formats: %s)", name, strings.Join(names, ", "))
}

// Detect returns the first ingester, in detection order, whose sniffer
// recognizes src.
func Detect(src *Source) (Ingester, error) {
	head := src.Head()
	var names []string
	for _, r := range registry {
		if r.ing.Sniff(head) {
			return r.ing, nil
		}
		names = append(names, r.ing.Format().Name)
	}
	return nil, fmt.Errorf("%s: not a trace format traceduck recognizes (tried %s); name one with --format", src.Name, strings.Join(names, ", "))
}

// Source is a trace being read: a file, a stream (standard input, a named
// pipe, a device such as a serial line) or bytes a caller opened. Reading
// through it computes the sha256 of the bytes and counts them (for
// progress).
type Source struct {
	Name string // path as given, "-" for standard input
	Size int64  // bytes, -1 when unknown

	br     *bufio.Reader
	closer io.Closer
	h      hash.Hash // nil once NoHash was called
	n      atomic.Int64
	// file: a regular file, which can be opened and read again (to hash
	// it beside the ingest); anything else is read once.
	file bool
}

// Open opens a path, or standard input for "-". A path that is not a
// regular file (a named pipe, a character device) is a stream, read once
// as standard input is: its size is unknown and its bytes are hashed as
// they are read, never by opening it a second time (a second reader of a
// pipe takes bytes away from the first; a device such as /dev/zero never
// ends).
func Open(path string) (*Source, error) {
	if path == "-" {
		return NewSource("-", os.Stdin, -1), nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if st.IsDir() {
		f.Close()
		return nil, fmt.Errorf("%s: is a directory", path)
	}
	size := st.Size()
	if !st.Mode().IsRegular() {
		size = -1
	}
	s := NewSource(path, f, size)
	s.closer = f
	s.file = st.Mode().IsRegular()
	return s, nil
}

// OpenContext is Open that gives up when ctx is done: opening a named
// pipe waits for a writer, and Ctrl-C must not wait with it. The file, if
// it opens later, is closed.
func OpenContext(ctx context.Context, path string) (*Source, error) {
	type opened struct {
		src *Source
		err error
	}
	ch := make(chan opened, 1)
	go func() {
		src, err := Open(path)
		ch <- opened{src, err}
	}()
	select {
	case o := <-ch:
		return o.src, o.err
	case <-ctx.Done():
		go func() {
			if o := <-ch; o.src != nil {
				o.src.Close()
			}
		}()
		return nil, ctx.Err()
	}
}

// NewSource reads a trace from r, once; name is used in messages.
func NewSource(name string, r io.Reader, size int64) *Source {
	s := &Source{Name: name, Size: size, h: sha256.New()}
	s.br = bufio.NewReaderSize(&hashingReader{r: r, s: s}, 256<<10)
	return s
}

// File reports whether the source is a regular file, which can be opened
// again; otherwise it is a stream, read once.
func (s *Source) File() bool { return s.file }

type hashingReader struct {
	r io.Reader
	s *Source
}

func (h *hashingReader) Read(p []byte) (int, error) {
	n, err := h.r.Read(p)
	if n > 0 {
		if h.s.h != nil {
			h.s.h.Write(p[:n])
		}
		h.s.n.Add(int64(n))
	}
	return n, err
}

// Head returns the first bytes of the trace without consuming them.
func (s *Source) Head() []byte {
	head, _ := s.br.Peek(SniffSize)
	return head
}

// Read reads the trace.
func (s *Source) Read(p []byte) (int, error) { return s.br.Read(p) }

// BytesRead is how many bytes have been read from the underlying file.
func (s *Source) BytesRead() int64 { return s.n.Load() }

// NoHash tells the source that the caller hashes the file itself, so that
// reading does not hash the bytes too. Call it before reading; SHA256
// then returns "".
func (s *Source) NoHash() { s.h = nil }

// SHA256 reads what is left of the trace and returns the hex sha256 of all
// its bytes.
func (s *Source) SHA256() (string, error) {
	if s.h == nil {
		return "", nil
	}
	if _, err := io.Copy(io.Discard, s.br); err != nil {
		return "", err
	}
	return hex.EncodeToString(s.h.Sum(nil)), nil
}

// Close closes the file.
func (s *Source) Close() error {
	if s.closer != nil {
		return s.closer.Close()
	}
	return nil
}

// FileSHA256 hashes a file without ingesting it, so that a duplicate is
// refused before any parsing.
func FileSHA256(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// ErrLineTooLong is returned by LineReader for a line over its bound.
var ErrLineTooLong = errors.New("line too long")
