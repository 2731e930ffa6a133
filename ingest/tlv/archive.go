package tlv

// archive.go reads TLV project archives (.tlv): zip files that TLV saved
// with the converted log (NAME.log, a JSON list of standard-format lines),
// the resource file (NAME.res, with its resource headers embedded), the
// visualize rules (.viz), TLV's window settings (.setting) and the shapes
// it drew (.shp). Everything is read in memory, within bounds (a zip bomb
// is an error, not an outage); the names of the entries are never used as
// paths: nothing is ever written.

import (
	"archive/zip"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"strings"

	"github.com/traceduck/traceduck/schema"
)

// ArchiveLimits bound what an archive may make traceduck read.
type ArchiveLimits struct {
	MaxEntries   int   // entries in the zip
	MaxEntrySize int64 // bytes of one entry, uncompressed
	MaxTotalSize int64 // bytes of all the entries read, uncompressed
}

// DefaultArchiveLimits are the bounds OpenArchive uses.
var DefaultArchiveLimits = ArchiveLimits{
	MaxEntries:   256,
	MaxEntrySize: 256 << 20,
	MaxTotalSize: 512 << 20,
}

// MaxArchiveSize bounds the archive ReadArchive reads (compressed).
const MaxArchiveSize = 256 << 20

// ArchiveEntry is one entry of an archive.
type ArchiveEntry struct {
	Name string // as the zip gives it; never used as a path
	Size int64  // uncompressed size, as the zip declares it
	// Data is the entry, inflated; nil for directories and for the shapes
	// TLV drew (.shp), which traceduck has no use for and does not inflate.
	Data []byte
}

// base is the entry's file name: its last element, with \ as / too.
func (e *ArchiveEntry) base() string {
	return path.Base(strings.ReplaceAll(e.Name, `\`, "/"))
}

// ext is the entry's extension, lower case (".log").
func (e *ArchiveEntry) ext() string { return strings.ToLower(path.Ext(e.base())) }

// Archive is a TLV project archive read in memory.
type Archive struct {
	Name    string // for messages
	Entries []ArchiveEntry
}

// archiveSkip lists the extensions OpenArchive lists but does not inflate.
var archiveSkip = map[string]bool{".shp": true}

// notZipError is an archive that is no zip file.
type notZipError struct{ err error }

func (e *notZipError) Error() string { return "not a TLV archive (a zip file): " + e.err.Error() }
func (e *notZipError) Unwrap() error { return e.err }

// OpenArchive reads a .tlv archive with DefaultArchiveLimits.
func OpenArchive(r io.ReaderAt, size int64) (*Archive, error) {
	return OpenArchiveLimits(r, size, DefaultArchiveLimits)
}

// OpenArchiveLimits reads a .tlv archive: every entry but directories and
// .shp is inflated in memory. An entry that declares, or inflates to, more
// than lim.MaxEntrySize bytes, entries that add up to more than
// lim.MaxTotalSize, or more than lim.MaxEntries entries, are an error.
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
	a := &Archive{}
	var total int64
	for _, f := range zr.File {
		e := ArchiveEntry{Name: f.Name, Size: int64(min(f.UncompressedSize64, 1<<62))}
		if f.FileInfo().IsDir() || strings.HasSuffix(f.Name, "/") || archiveSkip[e.ext()] {
			a.Entries = append(a.Entries, e)
			continue
		}
		if f.UncompressedSize64 > uint64(lim.MaxEntrySize) {
			return nil, fmt.Errorf("archive entry %q declares %d bytes, more than the bound of %d", f.Name, f.UncompressedSize64, lim.MaxEntrySize)
		}
		if total+int64(f.UncompressedSize64) > lim.MaxTotalSize {
			return nil, fmt.Errorf("archive entries add up to more than the bound of %d bytes (at %q)", lim.MaxTotalSize, f.Name)
		}
		rc, err := f.Open()
		if err != nil {
			return nil, fmt.Errorf("archive entry %q: %w", f.Name, err)
		}
		// Read at most one byte more than allowed: a header that lies
		// about the size does not get further than the bound.
		limit := min(lim.MaxEntrySize, lim.MaxTotalSize-total)
		var buf bytes.Buffer
		buf.Grow(int(min(int64(f.UncompressedSize64), limit)) + 1)
		n, err := io.Copy(&buf, io.LimitReader(rc, limit+1))
		rc.Close()
		if n > limit {
			if limit == lim.MaxEntrySize {
				return nil, fmt.Errorf("archive entry %q inflates to more than the bound of %d bytes (it declares %d)", f.Name, lim.MaxEntrySize, f.UncompressedSize64)
			}
			return nil, fmt.Errorf("archive entries add up to more than the bound of %d bytes (at %q)", lim.MaxTotalSize, f.Name)
		}
		if err != nil {
			return nil, fmt.Errorf("archive entry %q: %w", f.Name, err)
		}
		total += n
		e.Data = buf.Bytes()
		a.Entries = append(a.Entries, e)
	}
	return a, nil
}

// ReadArchive reads a whole .tlv archive from r (at most MaxArchiveSize
// bytes) and opens it; name is used in messages.
func ReadArchive(r io.Reader, name string) (*Archive, error) {
	data, err := io.ReadAll(io.LimitReader(r, MaxArchiveSize+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
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
	a, err := ReadArchive(f, path)
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

// Log returns the archive's log as standard-format text, one line per
// event. TLV saves it as a JSON list of lines; a plain text log is
// returned as it is.
func (a *Archive) Log() (name string, text []byte, err error) {
	e, err := a.LogEntry()
	if err != nil {
		return "", nil, err
	}
	name = a.entryName(e)
	data := bytes.TrimPrefix(e.Data, jcBOM)
	if !archiveIsJSONList(data) {
		return name, data, nil
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	if _, err := dec.Token(); err != nil { // [
		return "", nil, fmt.Errorf("%s: %w", name, err)
	}
	var out bytes.Buffer
	out.Grow(len(data))
	n := 0
	for dec.More() {
		n++
		var line string
		if err := dec.Decode(&line); err != nil {
			return "", nil, fmt.Errorf("%s: line %d of the JSON list: %w", name, n, err)
		}
		out.WriteString(line)
		out.WriteByte('\n')
	}
	return name, out.Bytes(), nil
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
