package tlv

// archive.go reads TLV project archives (.tlv): zip files that TLV saved
// with the converted log (NAME.log, a JSON list of standard-format lines),
// the resource file (NAME.res, with its resource headers embedded), the
// visualize rules (.viz), TLV's window settings (.setting) and the shapes
// it drew (.shp). The archive is read in memory and only what traceduck
// uses is inflated: the resource file and headers whole, within a bound,
// the log as it is read, a line at a time (a zip bomb is an error, not an
// outage); the names of the entries are never used as paths: nothing is
// ever written.

import (
	"archive/zip"
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"strings"

	"github.com/traceduck/traceduck/schema"
)

// ArchiveLimits bound what an archive may make traceduck read and hold.
type ArchiveLimits struct {
	MaxEntries int // entries in the zip
	// MaxLogSize bounds the log (.log), inflated: it is read as it is
	// inflated, a line at a time, never held whole.
	MaxLogSize int64
	// MaxHeldSize bounds the resource file and resource headers (.res,
	// .resh) together, inflated: they are parsed whole, so held in memory.
	MaxHeldSize int64
}

// DefaultArchiveLimits are the bounds OpenArchive uses: the entries held
// have the bound of a resource file read from disk.
var DefaultArchiveLimits = ArchiveLimits{
	MaxEntries:  256,
	MaxLogSize:  256 << 20,
	MaxHeldSize: MaxConfigSize,
}

// MaxArchiveSize bounds the archive ReadArchive reads (compressed).
const MaxArchiveSize = 256 << 20

// ArchiveEntry is one entry of an archive.
type ArchiveEntry struct {
	Name string // as the zip gives it; never used as a path
	Size int64  // uncompressed size, as the zip declares it
	// Data is the entry, inflated, for the resource file and resource
	// headers (.res, .resh) that the archive's Config parses; nil for the
	// others: the log is inflated as it is read (OpenLog), TLV's display
	// settings (.viz, .setting) and shapes (.shp) are never inflated.
	Data []byte

	file *zip.File
}

// base is the entry's file name: its last element, with \ as / too.
func (e *ArchiveEntry) base() string {
	return path.Base(strings.ReplaceAll(e.Name, `\`, "/"))
}

// ext is the entry's extension, lower case (".log").
func (e *ArchiveEntry) ext() string { return strings.ToLower(path.Ext(e.base())) }

// Archive is a TLV project archive: its entries, the resource file and
// headers inflated in memory.
type Archive struct {
	Name    string // for messages
	Entries []ArchiveEntry
	lim     ArchiveLimits
}

// notZipError is an archive that is no zip file.
type notZipError struct{ err error }

func (e *notZipError) Error() string { return "not a TLV archive (a zip file): " + e.err.Error() }
func (e *notZipError) Unwrap() error { return e.err }

// OpenArchive reads a .tlv archive with DefaultArchiveLimits.
func OpenArchive(r io.ReaderAt, size int64) (*Archive, error) {
	return OpenArchiveLimits(r, size, DefaultArchiveLimits)
}

// OpenArchiveLimits reads a .tlv archive's directory and inflates its
// resource file (the first .res) and resource headers (every .resh) in
// memory; the log is inflated later, as OpenLog's reader is read. More
// than lim.MaxEntries entries, held entries that declare or inflate to
// more than lim.MaxHeldSize bytes together, or a log that declares more
// than lim.MaxLogSize, are an error.
func OpenArchiveLimits(r io.ReaderAt, size int64, lim ArchiveLimits) (*Archive, error) {
	zr, err := zip.NewReader(r, size)
	if err != nil && !errors.Is(err, zip.ErrInsecurePath) {
		// ErrInsecurePath (../ or absolute names) does not matter: names
		// are not paths here.
		return nil, &notZipError{err}
	}
	if len(zr.File) > lim.MaxEntries {
		return nil, fmt.Errorf("archive has %d entries, more than the %d a TLV archive may have", len(zr.File), lim.MaxEntries)
	}
	a := &Archive{lim: lim}
	for _, f := range zr.File {
		e := ArchiveEntry{Name: f.Name, Size: int64(min(f.UncompressedSize64, 1<<62))}
		if !f.FileInfo().IsDir() && !strings.HasSuffix(f.Name, "/") {
			e.file = f
		}
		a.Entries = append(a.Entries, e)
	}
	if e, _ := a.LogEntry(); e != nil && e.Size > lim.MaxLogSize {
		return nil, fmt.Errorf("archive entry %q declares %d bytes, more than the bound of %d", e.Name, e.Size, lim.MaxLogSize)
	}
	var total int64
	for _, e := range a.held() {
		if e.Size > lim.MaxHeldSize-total {
			return nil, a.heldError(e, total, false)
		}
		rc, err := e.file.Open()
		if err != nil {
			return nil, fmt.Errorf("archive entry %q: %w", e.Name, err)
		}
		// Read at most one byte more than allowed: a header that lies
		// about the size does not get further than the bound.
		limit := lim.MaxHeldSize - total
		buf := bytes.NewBuffer(make([]byte, 0, e.Size+1))
		n, err := io.Copy(buf, io.LimitReader(rc, limit+1))
		rc.Close()
		if n > limit {
			return nil, a.heldError(e, total, true)
		}
		if err != nil {
			return nil, fmt.Errorf("archive entry %q: %w", e.Name, err)
		}
		total += n
		e.Data = buf.Bytes()
	}
	return a, nil
}

// held are the entries the archive's Config parses: the resource file
// and the resource headers.
func (a *Archive) held() []*ArchiveEntry {
	var held []*ArchiveEntry
	if e, err := a.ResEntry(); err == nil && e.file != nil {
		held = append(held, e)
	}
	for _, e := range a.WithExt(".resh") {
		if e.file != nil {
			held = append(held, e)
		}
	}
	return held
}

// heldError is a held entry past the bound: it alone, or with those
// before it.
func (a *Archive) heldError(e *ArchiveEntry, total int64, inflated bool) error {
	switch {
	case total > 0:
		return fmt.Errorf("archive's resource file and headers (.res, .resh) add up to more than the bound of %d bytes (at %q)", a.lim.MaxHeldSize, e.Name)
	case inflated:
		return fmt.Errorf("archive entry %q inflates to more than the bound of %d bytes (it declares %d)", e.Name, a.lim.MaxHeldSize, e.Size)
	}
	return fmt.Errorf("archive entry %q declares %d bytes, more than the bound of %d", e.Name, e.Size, a.lim.MaxHeldSize)
}

// ReadArchive reads a whole .tlv archive from r (at most MaxArchiveSize
// bytes; size is its size if known, else -1) and opens it; name is used
// in messages.
func ReadArchive(r io.Reader, size int64, name string) (*Archive, error) {
	// Sized for the whole file at once: growing it by doubling would
	// hold up to twice the archive meanwhile.
	buf := bytes.NewBuffer(make([]byte, 0, min(max(size, 0), MaxArchiveSize)+1))
	if _, err := io.Copy(buf, io.LimitReader(r, MaxArchiveSize+1)); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	data := buf.Bytes()
	if len(data) > MaxArchiveSize {
		return nil, fmt.Errorf("%s: archive larger than %d bytes", name, MaxArchiveSize)
	}
	if !IsArchive(data) {
		// Another format given as an archive: FILE@0, as for the other
		// binary formats.
		found := "the end of the file"
		if len(data) > 0 {
			found = fmt.Sprintf("%q", data[:min(len(data), 16)])
		}
		return nil, &schema.InputError{File: name, Offset: 0, Msg: `expected a TLV archive (a zip file, which begins "PK\x03\x04"), found ` + found}
	}
	a, err := OpenArchive(bytes.NewReader(data), int64(len(data)))
	var nz *notZipError
	if errors.As(err, &nz) {
		return nil, &schema.InputError{File: name, Offset: 0, Msg: "expected a TLV archive (a zip file), found a zip file that cannot be read (truncated or damaged?): " + nz.err.Error()}
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	a.Name = name
	return a, nil
}

// LoadArchive reads a .tlv archive and the Config of its resource file
// (headers embedded in it, or named and looked up in headerPaths, the
// archive's own .resh entries and the bundled sets; no rules: its log is
// converted already).
func LoadArchive(path string, headerPaths []string) (*Config, *Archive, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	size := int64(-1)
	if st, err := f.Stat(); err == nil {
		size = st.Size()
	}
	a, err := ReadArchive(f, size, path)
	if err != nil {
		return nil, nil, err
	}
	c, err := a.Config(headerPaths)
	if err != nil {
		return nil, nil, err
	}
	return c, a, nil
}

// IsArchive reports whether the first bytes of a file are those of a zip.
func IsArchive(head []byte) bool {
	return bytes.HasPrefix(head, []byte("PK\x03\x04")) || bytes.HasPrefix(head, []byte("PK\x05\x06"))
}

// Entry returns the entry of that name, or nil.
func (a *Archive) Entry(name string) *ArchiveEntry {
	for i := range a.Entries {
		if a.Entries[i].Name == name {
			return &a.Entries[i]
		}
	}
	return nil
}

// WithExt returns the entries with an extension (".res"), in zip order.
func (a *Archive) WithExt(ext string) []*ArchiveEntry {
	var out []*ArchiveEntry
	for i := range a.Entries {
		if a.Entries[i].ext() == strings.ToLower(ext) {
			out = append(out, &a.Entries[i])
		}
	}
	return out
}

func (a *Archive) names() string {
	var n []string
	for _, e := range a.Entries {
		n = append(n, e.Name)
	}
	if len(n) == 0 {
		return "none"
	}
	return strings.Join(n, ", ")
}

func (a *Archive) errorf(format string, args ...any) error {
	msg := fmt.Sprintf(format, args...)
	if a.Name != "" {
		return errors.New(a.Name + ": " + msg)
	}
	return errors.New(msg)
}

// ResEntry returns the resource file of the archive.
func (a *Archive) ResEntry() (*ArchiveEntry, error) {
	res := a.WithExt(".res")
	if len(res) == 0 {
		return nil, a.errorf("no resource file (.res) in the archive (entries: %s)", a.names())
	}
	return res[0], nil
}

// LogEntry returns the log of the archive: the .log whose name matches the
// .res, else the first .log.
func (a *Archive) LogEntry() (*ArchiveEntry, error) {
	logs := a.WithExt(".log")
	if len(logs) == 0 {
		return nil, a.errorf("no log (.log) in the archive (entries: %s)", a.names())
	}
	if res := a.WithExt(".res"); len(res) > 0 {
		stem := strings.TrimSuffix(res[0].base(), path.Ext(res[0].base()))
		for _, l := range logs {
			if strings.TrimSuffix(l.base(), path.Ext(l.base())) == stem {
				return l, nil
			}
		}
	}
	return logs[0], nil
}

// ResourceFile parses the archive's resource file.
func (a *Archive) ResourceFile() (*ResourceFile, error) {
	e, err := a.ResEntry()
	if err != nil {
		return nil, err
	}
	return ParseResourceFile(a.entryName(e), e.Data)
}

func (a *Archive) entryName(e *ArchiveEntry) string {
	if a.Name != "" {
		return a.Name + "!" + e.Name
	}
	return e.Name
}

// Config returns the Config of the archive: its resource file, with the
// headers it embeds or names (looked up in the archive's .resh entries,
// then headerPaths, then the bundled sets), and no rules: the archive's
// log is in the standard format.
func (a *Archive) Config(headerPaths []string) (*Config, error) {
	rf, err := a.ResourceFile()
	if err != nil {
		return nil, err
	}
	opt := Options{HeaderPaths: headerPaths, NoRules: true}
	for _, e := range a.WithExt(".resh") {
		sets, err := ParseHeaders(a.entryName(e), e.Data)
		if err != nil {
			return nil, err
		}
		opt.HeaderSets = append(opt.HeaderSets, sets...)
	}
	return NewConfig(rf, opt)
}

// OpenLog opens the archive's log: its reader gives standard-format text,
// one line per event, inflating the entry as it is read (at most
// MaxLogSize bytes). TLV saves the log as a JSON list of lines, which the
// reader decodes a character at a time (jsonLines); a plain text log is
// given as it is.
func (a *Archive) OpenLog() (name string, log io.ReadCloser, err error) {
	e, err := a.LogEntry()
	if err != nil {
		return "", nil, err
	}
	name = a.entryName(e)
	if e.file == nil {
		return "", nil, a.errorf("archive entry %q: expected a log, found a directory", e.Name)
	}
	rc, err := e.file.Open()
	if err != nil {
		return "", nil, a.errorf("archive entry %q: %v", e.Name, err)
	}
	lr := &logLimit{r: rc, a: a, e: e, left: a.lim.MaxLogSize}
	br := bufio.NewReaderSize(lr, 64<<10)
	if head, _ := br.Peek(len(jcBOM)); bytes.Equal(head, jcBOM) {
		br.Discard(len(jcBOM))
	}
	// A JSON list is told from text by its first bytes (whitespace more
	// than the buffer holds makes it text).
	head, _ := br.Peek(br.Size())
	if !archiveIsJSONList(head) {
		return name, readCloser{br, rc}, nil
	}
	return name, readCloser{newJSONLines(br, name), rc}, nil
}

type readCloser struct {
	io.Reader
	io.Closer
}

// logLimit reads an entry inflating, up to left bytes: one more is an
// error (the zip reader also refuses more than the entry declares).
type logLimit struct {
	r    io.Reader
	a    *Archive
	e    *ArchiveEntry
	left int64
}

func (l *logLimit) Read(p []byte) (int, error) {
	if int64(len(p)) > l.left+1 {
		p = p[:l.left+1]
	}
	n, err := l.r.Read(p)
	if int64(n) > l.left {
		return 0, l.a.errorf("archive entry %q inflates to more than the bound of %d bytes (it declares %d)", l.e.Name, l.a.lim.MaxLogSize, l.e.Size)
	}
	l.left -= int64(n)
	if err != nil && err != io.EOF {
		err = l.a.errorf("archive entry %q: %v", l.e.Name, err)
	}
	return n, err
}

// archiveIsJSONList tells TLV's saved log (["[1]A.b=c", ...]) from a
// standard-format text ([1]A.b=c): after the "[" comes a quote or "]".
func archiveIsJSONList(data []byte) bool {
	s := bytes.TrimLeft(data, " \t\r\n")
	if len(s) == 0 || s[0] != '[' {
		return false
	}
	s = bytes.TrimLeft(s[1:], " \t\r\n")
	return len(s) > 0 && (s[0] == '"' || s[0] == ']')
}
