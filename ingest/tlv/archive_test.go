package tlv

import (
	"archive/zip"
	"bytes"
	"compress/flate"
	"errors"
	"hash/crc32"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestRealArchives(t *testing.T) {
	for _, f := range toppersGlob(t, "*.tlv") {
		stem := strings.TrimSuffix(filepath.Base(f), ".tlv")
		stem = stem[strings.LastIndex(stem, "__")+2:] // asp_short
		t.Run(stem, func(t *testing.T) {
			c, a, err := LoadArchive(f, nil)
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, e := range a.Entries {
				names = append(names, e.Name)
				if (e.Data == nil) != strings.HasSuffix(e.Name, ".shp") {
					t.Errorf("%s: data %d bytes", e.Name, len(e.Data))
				}
				if e.Data != nil && int64(len(e.Data)) != e.Size {
					t.Errorf("%s: %d bytes, declares %d", e.Name, len(e.Data), e.Size)
				}
			}
			want := []string{stem + ".log", stem + ".res", stem + ".setting", stem + ".shp", stem + ".viz"}
			if strings.Join(names, " ") != strings.Join(want, " ") {
				t.Errorf("entries: %v", names)
			}
			if e, _ := a.ResEntry(); e == nil || e.Name != stem+".res" {
				t.Errorf("res entry: %v", e)
			}
			// The resource file embeds its headers: no rules (the log is
			// converted), no header set looked up, every type known.
			if c.Converts() || len(c.Headers) != 1 || c.Headers[0].Name != "" || len(c.Types) < 8 || c.Types["Task"] == nil {
				t.Errorf("config: converts %v, headers %d, types %d", c.Converts(), len(c.Headers), len(c.Types))
			}
			if len(c.Warnings) != 0 {
				t.Errorf("warnings: %v", c.Warnings)
			}
			if c.Res.TimeScale != "us" || c.Res.TimeRadix != 10 || len(c.Res.Resources) < 12 || c.Res.Resources[0].Name != "CurrentContext" {
				t.Errorf("res: %+v", c.Res)
			}
			// TASK_TEX has "id": null in a saved project.
			for _, r := range c.Res.Resources {
				if r.Name == "TASK_TEX" && (len(r.Attributes) != 2 || r.Attributes[1] != (Value{"id", "", KindNull})) {
					t.Errorf("TASK_TEX: %+v", r.Attributes)
				}
			}
			name, text, err := a.Log()
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasSuffix(name, "!"+stem+".log") {
				t.Errorf("log name %q", name)
			}
			lines := strings.Split(strings.TrimSuffix(string(text), "\n"), "\n")
			if len(lines) < 3000 || !strings.HasPrefix(lines[0], "[1926") || !strings.HasSuffix(lines[0], "]LOGTASK.dispatch()") {
				t.Errorf("%d lines, first %q", len(lines), lines[0])
			}
			if stem == "asp_short" {
				ref, err := os.ReadFile(toppersFile(t, "__asp_short_standard_format.log"))
				if err != nil {
					t.Fatal(err)
				}
				refLines := strings.Split(strings.TrimSpace(strings.ReplaceAll(string(ref), "\r\n", "\n")), "\n")
				if len(lines) != len(refLines) || lines[0] != refLines[0] {
					t.Errorf("%d lines, the standard-format log has %d", len(lines), len(refLines))
				}
			}
		})
	}
}

// makeZip builds a zip in memory.
func makeZip(t *testing.T, files ...string) []byte {
	t.Helper()
	var b bytes.Buffer
	zw := zip.NewWriter(&b)
	for i := 0; i+1 < len(files); i += 2 {
		w, err := zw.Create(files[i])
		if err != nil {
			t.Fatal(err)
		}
		w.Write([]byte(files[i+1]))
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

const smallRes = `{"TimeScale": "ns", "ResourceHeaders": ["asp"], "Resources": {"TASK1": {"Type": "Task", "Attributes": {"id": 1}}}}`

func TestArchiveSmall(t *testing.T) {
	data := makeZip(t,
		"p/", "",
		"p/app.res", smallRes,
		"p/other.log", "[1]X.y=z\n",
		"p/app.log", "\xEF\xBB\xBF[\n \"[1]TASK1.state=RUNNING\",\n \"[2]TASK1.state=WAITING\"\n]",
		"p/app.shp", "shapes",
	)
	a, err := OpenArchive(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	if len(a.Entries) != 5 || a.Entry("p/") == nil || a.Entry("p/app.shp").Data != nil || a.Entry("nosuch") != nil {
		t.Errorf("entries: %+v", a.Entries)
	}
	name, text, err := a.Log()
	if err != nil || name != "p/app.log" || string(text) != "[1]TASK1.state=RUNNING\n[2]TASK1.state=WAITING\n" {
		t.Errorf("log %q %q %v", name, text, err)
	}
	c, err := a.Config(nil)
	if err != nil {
		t.Fatal(err)
	}
	if c.Converts() || c.Sources["headers asp"] != "bundled:asp.resh" {
		t.Errorf("config: %v", c.Sources)
	}
	// A plain-text log is returned as it is.
	data = makeZip(t, "a.res", smallRes, "a.log", "[1]TASK1.state=RUNNING\r\n")
	a, err = OpenArchive(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	if _, text, err := a.Log(); err != nil || string(text) != "[1]TASK1.state=RUNNING\r\n" {
		t.Errorf("plain log %q %v", text, err)
	}
	// An archive's own .resh is used before the bundled sets.
	data = makeZip(t, "a.res", `{"ResourceHeaders": ["mine"], "Resources": {"J": {"Type": "Job"}}}`,
		"a.resh", `{"mine": {"Job": {}}}`, "a.log", "[]")
	a, err = OpenArchive(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	if c, err := a.Config(nil); err != nil || c.Types["Job"] == nil || c.Sources["headers mine"] != "given" {
		t.Errorf("own headers: %v", err)
	}
}

func TestArchiveMissing(t *testing.T) {
	data := makeZip(t, "a.viz", "{}")
	a, err := ReadArchive(bytes.NewReader(data), "x.tlv")
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := a.Log(); err == nil || err.Error() != "x.tlv: no log (.log) in the archive (entries: a.viz)" {
		t.Errorf("no log: %v", err)
	}
	if _, err := a.Config(nil); err == nil || err.Error() != "x.tlv: no resource file (.res) in the archive (entries: a.viz)" {
		t.Errorf("no res: %v", err)
	}
	if _, err := ReadArchive(strings.NewReader("[1]A.b=c\n"), "y.tlv"); err == nil || err.Error() != `y.tlv@0: expected a TLV archive (a zip file, which begins "PK\x03\x04"), found "[1]A.b=c\n"` {
		t.Errorf("not a zip: %v", err)
	}
	if _, err := ReadArchive(bytes.NewReader(data[:len(data)-1]), "z.tlv"); err == nil || err.Error() != "z.tlv@0: expected a TLV archive (a zip file), found a zip file that cannot be read (truncated or damaged?): zip: not a valid zip file" {
		t.Errorf("a cut zip: %v", err)
	}
	if !IsArchive(data) || IsArchive([]byte("[1]A.b=c")) {
		t.Error("IsArchive")
	}
}

// A zip bomb: a small archive that declares, or inflates to, far more
// than the bounds.
func TestArchiveBomb(t *testing.T) {
	const big = 64 << 20
	lim := ArchiveLimits{MaxEntries: 8, MaxEntrySize: 1 << 20, MaxTotalSize: 3 << 19}

	// Honest headers: 64 MiB of zeros, declared.
	var b bytes.Buffer
	zw := zip.NewWriter(&b)
	w, _ := zw.Create("bomb.log")
	zeros := make([]byte, 1<<20)
	for i := 0; i < big/len(zeros); i++ {
		w.Write(zeros)
	}
	zw.Close()
	if b.Len() > 1<<20 {
		t.Fatalf("the bomb is %d bytes", b.Len())
	}
	_, err := OpenArchiveLimits(bytes.NewReader(b.Bytes()), int64(b.Len()), lim)
	if err == nil || err.Error() != `archive entry "bomb.log" declares 67108864 bytes, more than the bound of 1048576` {
		t.Errorf("declared: %v", err)
	}

	// Lying headers: the entry declares 10 bytes and inflates to 64 MiB.
	var comp bytes.Buffer
	fw, _ := flate.NewWriter(&comp, flate.BestCompression)
	crc := crc32.NewIEEE()
	for i := 0; i < big/len(zeros); i++ {
		fw.Write(zeros)
		crc.Write(zeros)
	}
	fw.Close()
	b.Reset()
	zw = zip.NewWriter(&b)
	raw, err := zw.CreateRaw(&zip.FileHeader{Name: "liar.log", Method: zip.Deflate, CRC32: crc.Sum32(),
		CompressedSize64: uint64(comp.Len()), UncompressedSize64: 10})
	if err != nil {
		t.Fatal(err)
	}
	raw.Write(comp.Bytes())
	zw.Close()
	_, err = OpenArchiveLimits(bytes.NewReader(b.Bytes()), int64(b.Len()), lim)
	if err == nil || !errors.Is(err, zip.ErrFormat) && !strings.Contains(err.Error(), "inflates to more than") {
		t.Errorf("lying: %v", err)
	}
	// Even when the zip reader would not check the size, the bound
	// holds: the same liar, declaring the bound exactly.
	b.Reset()
	zw = zip.NewWriter(&b)
	raw, _ = zw.CreateRaw(&zip.FileHeader{Name: "liar.log", Method: zip.Deflate, CRC32: crc.Sum32(),
		CompressedSize64: uint64(comp.Len()), UncompressedSize64: 1 << 20})
	raw.Write(comp.Bytes())
	zw.Close()
	_, err = OpenArchiveLimits(bytes.NewReader(b.Bytes()), int64(b.Len()), lim)
	if err == nil {
		t.Error("no error for an entry inflating past the bound")
	}

	// Entries that are each under the bound but add up to more.
	data := makeZip(t, "a.log", strings.Repeat("x", 1<<19), "b.log", strings.Repeat("x", 1<<19), "c.log", strings.Repeat("x", 1<<19), "d.log", "x")
	_, err = OpenArchiveLimits(bytes.NewReader(data), int64(len(data)), lim)
	if err == nil || err.Error() != `archive entries add up to more than the bound of 1572864 bytes (at "d.log")` {
		t.Errorf("total: %v", err)
	}

	// Too many entries.
	var many []string
	for i := 0; i < 9; i++ {
		many = append(many, string(rune('a'+i))+".viz", "{}")
	}
	data = makeZip(t, many...)
	_, err = OpenArchiveLimits(bytes.NewReader(data), int64(len(data)), lim)
	if err == nil || err.Error() != "archive has 9 entries, more than the 8 a TLV archive may have" {
		t.Errorf("entries: %v", err)
	}

	// The default bounds take the real archives (TestRealArchives) and a
	// big .shp, which is never inflated.
	b.Reset()
	zw = zip.NewWriter(&b)
	w, _ = zw.Create("a.shp")
	for i := 0; i < big/len(zeros); i++ {
		w.Write(zeros)
	}
	zw.Close()
	a, err := OpenArchiveLimits(bytes.NewReader(b.Bytes()), int64(b.Len()), lim)
	if err != nil || a.Entries[0].Data != nil || a.Entries[0].Size != big {
		t.Errorf("shp: %v", err)
	}
}

// Names that climb out of a directory or are absolute are only names:
// the entries stay in memory, nothing is written anywhere.
func TestArchiveInsecurePaths(t *testing.T) {
	dir := t.TempDir()
	work := filepath.Join(dir, "a", "b")
	if err := os.MkdirAll(work, 0o755); err != nil {
		t.Fatal(err)
	}
	old, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chdir(work); err != nil {
		t.Fatal(err)
	}
	defer os.Chdir(old)

	data := makeZip(t,
		"../../evil.res", smallRes,
		"/tmp/evil.log", "[1]TASK1.state=RUNNING\n",
		`..\..\evil.viz`, "{}",
	)
	a, err := OpenArchive(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	if a.Entry("../../evil.res") == nil || a.Entry("/tmp/evil.log") == nil || a.Entry(`..\..\evil.viz`) == nil {
		t.Errorf("entries: %+v", a.Entries)
	}
	if _, text, err := a.Log(); err != nil || string(text) != "[1]TASK1.state=RUNNING\n" {
		t.Errorf("log: %q %v", text, err)
	}
	if _, err := a.Config(nil); err != nil {
		t.Error(err)
	}
	// Nothing appeared anywhere under the temporary directory.
	var found []string
	filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
		if err == nil && !info.IsDir() {
			found = append(found, p)
		}
		return nil
	})
	if len(found) != 0 {
		t.Errorf("files written: %v", found)
	}
}
