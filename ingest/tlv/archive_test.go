package tlv

import (
	"archive/zip"
	"bytes"
	"compress/flate"
	"hash/crc32"
	"io"
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
				// Only the resource file is inflated when the archive is
				// opened (it has no .resh); the log is, as it is read.
				if (e.Data == nil) == strings.HasSuffix(e.Name, ".res") {
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
			name, text, err := readLog(a)
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

// readLog reads the whole of an archive's log.
func readLog(a *Archive) (string, []byte, error) {
	name, log, err := a.OpenLog()
	if err != nil {
		return "", nil, err
	}
	defer log.Close()
	text, err := io.ReadAll(log)
	return name, text, err
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
	name, text, err := readLog(a)
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
	if _, text, err := readLog(a); err != nil || string(text) != "[1]TASK1.state=RUNNING\r\n" {
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
	a, err := ReadArchive(bytes.NewReader(data), int64(len(data)), "x.tlv")
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := a.OpenLog(); err == nil || err.Error() != "x.tlv: no log (.log) in the archive (entries: a.viz)" {
		t.Errorf("no log: %v", err)
	}
	if _, err := a.Config(nil); err == nil || err.Error() != "x.tlv: no resource file (.res) in the archive (entries: a.viz)" {
		t.Errorf("no res: %v", err)
	}
	if _, err := ReadArchive(strings.NewReader("[1]A.b=c\n"), -1, "y.tlv"); err == nil || err.Error() != `y.tlv@0: expected a TLV archive (a zip file, which begins "PK\x03\x04"), found "[1]A.b=c\n"` {
		t.Errorf("not a zip: %v", err)
	}
	if _, err := ReadArchive(bytes.NewReader(data[:len(data)-1]), -1, "z.tlv"); err == nil || err.Error() != "z.tlv@0: expected a TLV archive (a zip file), found a zip file that cannot be read (truncated or damaged?): zip: not a valid zip file" {
		t.Errorf("a cut zip: %v", err)
	}
	if !IsArchive(data) || IsArchive([]byte("[1]A.b=c")) {
		t.Error("IsArchive")
	}
}

// A zip bomb: a small archive that declares, or inflates to, far more
// than the bounds. (TestArchiveMemory, in archiveingest_test.go, measures
// the memory an ingest of one takes.)
func TestArchiveBomb(t *testing.T) {
	const big = 64 << 20
	lim := ArchiveLimits{MaxEntries: 8, MaxLogSize: 1 << 20, MaxHeldSize: 3 << 19}
	zeros := make([]byte, 1<<20)
	open := func(data []byte) (*Archive, error) {
		a, err := OpenArchiveLimits(bytes.NewReader(data), int64(len(data)), lim)
		if a != nil {
			a.Name = "x.tlv"
		}
		return a, err
	}

	// 64 MiB of zeros, deflated once.
	var comp bytes.Buffer
	fw, _ := flate.NewWriter(&comp, flate.BestSpeed)
	crc := crc32.NewIEEE()
	for i := 0; i < big/len(zeros); i++ {
		fw.Write(zeros)
		crc.Write(zeros)
	}
	fw.Close()
	raw := func(zw *zip.Writer, name string, declares uint64) {
		w, err := zw.CreateRaw(&zip.FileHeader{Name: name, Method: zip.Deflate, CRC32: crc.Sum32(),
			CompressedSize64: uint64(comp.Len()), UncompressedSize64: declares})
		if err != nil {
			t.Fatal(err)
		}
		w.Write(comp.Bytes())
	}

	// Honest headers: 64 MiB of zeros, declared.
	var b bytes.Buffer
	zw := zip.NewWriter(&b)
	raw(zw, "bomb.log", big)
	zw.Close()
	if b.Len() > 1<<20 {
		t.Fatalf("the bomb is %d bytes", b.Len())
	}
	_, err := open(b.Bytes())
	if err == nil || err.Error() != `archive entry "bomb.log" declares 67108864 bytes, more than the bound of 1048576` {
		t.Errorf("declared: %v", err)
	}

	// Lying headers: the entry declares 10 bytes, or the bound exactly,
	// and inflates to 64 MiB. The log is inflated as it is read: reading
	// it is the error.
	liar := func(name string, declares uint64) []byte {
		var b bytes.Buffer
		zw := zip.NewWriter(&b)
		if name != "a.res" {
			w, _ := zw.Create("a.res")
			w.Write([]byte(smallRes))
		}
		raw(zw, name, declares)
		zw.Close()
		return b.Bytes()
	}
	for _, declares := range []uint64{10, 1 << 20} {
		a, err := open(liar("liar.log", declares))
		if err != nil {
			t.Fatal(err)
		}
		_, text, err := readLog(a)
		if err == nil || err.Error() != `x.tlv: archive entry "liar.log": zip: not a valid zip file` {
			t.Errorf("a log declaring %d: %v", declares, err)
		}
		if len(text) > int(declares) {
			t.Errorf("a log declaring %d: %d bytes read", declares, len(text))
		}
	}
	// Even when the zip reader would not check the size, the bound holds.
	a := &Archive{Name: "x.tlv", lim: lim}
	e := &ArchiveEntry{Name: "liar.log", Size: 10}
	n, err := io.Copy(io.Discard, &logLimit{r: bytes.NewReader(make([]byte, 2<<20)), a: a, e: e, left: lim.MaxLogSize})
	if err == nil || err.Error() != `x.tlv: archive entry "liar.log" inflates to more than the bound of 1048576 bytes (it declares 10)` || n != 1<<20 {
		t.Errorf("log limit: %d bytes, %v", n, err)
	}
	// The resource file is inflated when the archive is opened.
	for _, declares := range []uint64{10, 3 << 19} {
		if _, err := open(liar("a.res", declares)); err == nil || err.Error() != `archive entry "a.res": zip: not a valid zip file` {
			t.Errorf("a resource file declaring %d: %v", declares, err)
		}
	}

	// The resource file and headers, each under the bound, add up to more.
	half := strings.Repeat("x", 1<<19)
	data := makeZip(t, "a.res", half, "a.resh", half, "b.resh", half, "c.resh", "x", "a.log", "[]")
	_, err = open(data)
	if err == nil || err.Error() != `archive's resource file and headers (.res, .resh) add up to more than the bound of 1572864 bytes (at "c.resh")` {
		t.Errorf("total: %v", err)
	}
	data = makeZip(t, "a.res", strings.Repeat("x", 2<<20))
	_, err = open(data)
	if err == nil || err.Error() != `archive entry "a.res" declares 2097152 bytes, more than the bound of 1572864` {
		t.Errorf("held: %v", err)
	}

	// Too many entries.
	var many []string
	for i := 0; i < 9; i++ {
		many = append(many, string(rune('a'+i))+".viz", "{}")
	}
	data = makeZip(t, many...)
	_, err = open(data)
	if err == nil || err.Error() != "archive has 9 entries, more than the 8 a TLV archive may have" {
		t.Errorf("entries: %v", err)
	}

	// Entries traceduck has no use for are not inflated, whatever their
	// size: TLV's shapes, display settings, a second log.
	b.Reset()
	zw = zip.NewWriter(&b)
	for _, name := range []string{"a.shp", "a.viz", "a.setting", "other.log"} {
		raw(zw, name, big)
	}
	w, _ := zw.Create("a.res")
	w.Write([]byte(smallRes))
	w, _ = zw.Create("a.log")
	w.Write([]byte(`["[1]TASK1.state=RUNNING"]`))
	zw.Close()
	a, err = open(b.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range a.Entries[:4] {
		if e.Data != nil || e.Size != big {
			t.Errorf("%s: %d bytes of data, declares %d", e.Name, len(e.Data), e.Size)
		}
	}
	if _, text, err := readLog(a); err != nil || string(text) != "[1]TASK1.state=RUNNING\n" {
		t.Errorf("log %q %v", text, err)
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
	if _, text, err := readLog(a); err != nil || string(text) != "[1]TASK1.state=RUNNING\n" {
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
