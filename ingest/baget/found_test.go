package baget

import (
	"os"
	"path/filepath"
	"testing"
)

// TestFindDescription: without --description the description comes from
// OS_VERSION-ARCH.xml beside the log, else from the bundled ones, and
// findDescription says which, so that the ingest line can name the file
// it read (runs.meta found_beside, found_bundled).
func TestFindDescription(t *testing.T) {
	dir := t.TempDir()
	log := filepath.Join(dir, "x.blog")
	h := Header{OS: "minirtos-2.1", Arch: "ppc32"}

	d, found, err := (&Ingester{}).findDescription(log, h)
	if err != nil || found != foundBundled || d.File != "examples/minirtos.xml" {
		t.Fatalf("nothing beside: %v, found %d, file %q; want the bundled examples/minirtos.xml", err, found, fileOf(d))
	}

	xml, err := ExampleXML("minirtos.xml")
	if err != nil {
		t.Fatal(err)
	}
	beside := filepath.Join(dir, "minirtos-2.1-ppc32.xml")
	if err := os.WriteFile(beside, xml, 0o644); err != nil {
		t.Fatal(err)
	}
	d, found, err = (&Ingester{}).findDescription(log, h)
	if err != nil || found != foundBeside || d.File != beside {
		t.Fatalf("beside: %v, found %d, file %q; want %s found beside", err, found, fileOf(d), beside)
	}

	given := filepath.Join(dir, "given.xml")
	if err := os.WriteFile(given, xml, 0o644); err != nil {
		t.Fatal(err)
	}
	d, found, err = (&Ingester{description: given}).findDescription(log, h)
	if err != nil || found != foundGiven || d.File != given {
		t.Fatalf("--description: %v, found %d, file %q; want %s as given", err, found, fileOf(d), given)
	}

	_, _, err = (&Ingester{}).findDescription(log, Header{OS: "tos", Arch: "z80"})
	if want := log + `: no description for os "tos" arch "z80": give --description FILE.xml (looked for ` + filepath.Join(dir, "tos-z80.xml") + " and the bundled descriptions)"; err == nil || err.Error() != want {
		t.Errorf("no description: %v\nwant %s", err, want)
	}
}

func fileOf(d *Description) string {
	if d == nil {
		return ""
	}
	return d.File
}
