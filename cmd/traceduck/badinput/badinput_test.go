// Package badinput runs the catalogue of bad inputs (testdata/*/*.txtar)
// through the traceduck binary and keeps docs/bad-input.md. A package of
// its own, beside cmd/traceduck's tests: together they came near go
// test's 10-minute limit per package on a loaded 2-core machine.
package badinput

import (
	"bytes"
	"database/sql"
	"encoding/hex"
	"flag"
	"fmt"
	"github.com/traceduck/traceduck/internal/clitest"
	"github.com/traceduck/traceduck/internal/dbtest"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"text/template"

	"golang.org/x/tools/txtar"
)

// TestBadInput runs every case of testdata/FORMAT/*.txtar through
// `traceduck ingest` (the binary, clitest.Binary) and compares
// what traceduck did — exit code, standard error, the diagnostics of the
// run, the rows of the case's query — with the case's "-- want --"
// section, then checks that docs/bad-input.md is the catalogue made of the
// cases. -update rewrites both.
//
// A case's comment holds "key: value" lines:
//
//	class:  the class of bad input (first column of the catalogue)
//	does:   what traceduck does with it, in words (the want section and
//	        the query prove it)
//	args:   ingest flags (--format, --skip-bad, format flags), split at blanks
//	query:  SQL run on the database after a successful ingest
//	input:  the file to ingest (default: the first file of the archive)
//	db:     a file of the archive to use as the database (default: a new one);
//	        a failed ingest must leave it byte for byte as it was
//	first:  "the same ingest": run the ingest once before, with success
//
// A case with a file "commands" runs those instead of the ingest: one
// traceduck command line per line (its arguments split at blanks, 'single
// quotes' keep blanks; $DIR is the case's directory, $DB the database),
// each but the last must succeed; the last one's exit code, standard error
// and (with "stdout: yes") standard output are what it did. A line
// beginning with "# " is a comment. Its errors may be usage errors (exit 2).
//
// Files are written into a temporary directory, and paths in messages are
// shown relative to it. A file named NAME.hex is written as NAME, decoded
// from hex digits, HH*N, "quoted strings" (Go syntax) and # comments; a file
// named NAME.tmpl is written as NAME through text/template with
// {{repeat S N}}.
func TestMain(m *testing.M) {
	flag.Parse()
	clitest.Main(m)
}

// update is the one -update flag of every test package (internal/dbtest).
var update = dbtest.Update

// run runs traceduck with args and no input, as a user does, appends
// what it printed to stdout and stderr, and returns its exit code.
func run(t *testing.T, args []string, stdout, stderr *bytes.Buffer) int {
	t.Helper()
	r := clitest.RunIn(t, os.TempDir(), nil, args...)
	stdout.WriteString(r.Stdout)
	stderr.WriteString(r.Stderr)
	return r.Code
}

func TestBadInput(t *testing.T) {
	cases := loadBadCases(t)
	// The cases run in parallel inside a group, so that the page is made
	// once they have all ended.
	t.Run("case", func(t *testing.T) {
		for _, c := range cases {
			t.Run(c.id, func(t *testing.T) {
				t.Parallel()
				c.check(t)
			})
		}
	})
	if t.Failed() {
		return
	}
	doc := badInputDoc(cases)

	const path = "../../../docs/bad-input.md"
	if *update {
		if err := os.WriteFile(path, []byte(doc), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	have, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if string(have) != doc {
		t.Errorf("%s is stale: go test ./cmd/traceduck/badinput -update, then review the diff", path)
	}
}

// check runs the case and compares what happened with its want section
// (-update: rewrites it).
func (c *badCase) check(t *testing.T) {
	got := c.run(t)
	if *update {
		c.ar.Files = append(withoutWant(c.ar.Files), txtar.File{Name: "want", Data: []byte(got)})
		if err := os.WriteFile(c.path, txtar.Format(c.ar), 0o644); err != nil {
			t.Fatal(err)
		}
		c.want = got
		return
	}
	if got != c.want {
		t.Errorf("%s: what traceduck did changed (go test ./cmd/traceduck/badinput -update, then review the diff)\n%s", c.path, dbtest.Diff(c.want, got))
	}
}

// badCase is one case of testdata.
type badCase struct {
	path, id, format string
	ar               *txtar.Archive
	meta             map[string]string
	want             string
}

func loadBadCases(t *testing.T) []*badCase {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join("testdata", "*", "*.txtar"))
	if err != nil {
		t.Fatal(err)
	}
	if len(paths) == 0 {
		t.Fatal("no cases in testdata")
	}
	var cases []*badCase
	for _, p := range paths {
		ar, err := txtar.ParseFile(p)
		if err != nil {
			t.Fatal(err)
		}
		c := &badCase{path: p, ar: ar, meta: map[string]string{},
			format: filepath.Base(filepath.Dir(p)),
			id:     filepath.Base(filepath.Dir(p)) + "/" + strings.TrimSuffix(filepath.Base(p), ".txtar")}
		for _, line := range strings.Split(string(ar.Comment), "\n") {
			if strings.TrimSpace(line) == "" {
				continue
			}
			k, v, ok := strings.Cut(line, ":")
			if !ok {
				t.Fatalf("%s: comment line %q is not key: value", p, line)
			}
			c.meta[strings.TrimSpace(k)] = strings.TrimSpace(v)
		}
		for _, k := range []string{"class", "does"} {
			if c.meta[k] == "" {
				t.Fatalf("%s: no %q line", p, k)
			}
		}
		for _, f := range ar.Files {
			if f.Name == "want" {
				c.want = string(f.Data)
			}
		}
		cases = append(cases, c)
	}
	return cases
}

func withoutWant(files []txtar.File) []txtar.File {
	var out []txtar.File
	for _, f := range files {
		if f.Name != "want" {
			out = append(out, f)
		}
	}
	return out
}

// run writes the case's files, ingests the input and describes what
// happened. It also checks what holds for every case: an error is one
// line on standard error, "traceduck: " first, no stack trace, exit code
// 1, and leaves the database without a run.
func (c *badCase) run(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	input := c.meta["input"]
	var commands string
	for _, f := range withoutWant(c.ar.Files) {
		if f.Name == "commands" {
			commands = string(f.Data)
			continue
		}
		name, data := f.Name, f.Data
		switch {
		case strings.HasSuffix(name, ".hex"):
			name = strings.TrimSuffix(name, ".hex")
			var err error
			if data, err = decodeHexFile(data); err != nil {
				t.Fatalf("%s: %s: %v", c.path, f.Name, err)
			}
		case strings.HasSuffix(name, ".tmpl"):
			name = strings.TrimSuffix(name, ".tmpl")
			tmpl, err := template.New(name).Funcs(template.FuncMap{"repeat": strings.Repeat}).Parse(string(data))
			if err != nil {
				t.Fatalf("%s: %s: %v", c.path, f.Name, err)
			}
			var b bytes.Buffer
			if err := tmpl.Execute(&b, nil); err != nil {
				t.Fatalf("%s: %s: %v", c.path, f.Name, err)
			}
			data = b.Bytes()
		}
		if input == "" {
			input = name
		}
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		clitest.WriteFile(t, dir, name, data)
	}
	db := filepath.Join(dir, "t.duckdb")
	if name := c.meta["db"]; name != "" {
		db = filepath.Join(dir, name)
	}
	if commands != "" {
		return c.runCommands(t, dir, db, commands)
	}
	if input == "" {
		t.Fatalf("%s: no file to ingest", c.path)
	}
	dbBefore, _ := os.ReadFile(db)
	args := []string{"ingest", "--db", db}
	if a := c.meta["args"]; a != "" {
		for _, f := range strings.Fields(a) {
			if !strings.HasPrefix(f, "-") && strings.Contains(f, ".") {
				f = filepath.Join(dir, f) // a file of the case given to a flag
			}
			args = append(args, f)
		}
	}
	args = append(args, filepath.Join(dir, input))
	var stdout, stderr bytes.Buffer
	runsBefore := "0"
	if c.meta["first"] == "the same ingest" {
		if code := run(t, args, &stdout, &stderr); code != 0 {
			t.Fatalf("the first ingest: exit %d: %s", code, stderr.String())
		}
		stdout.Reset()
		runsBefore = "1"
	}
	code := run(t, args, &stdout, &stderr)
	rel := func(s string) string { return strings.ReplaceAll(s, dir+string(filepath.Separator), "") }

	var out strings.Builder
	fmt.Fprintf(&out, "exit %d\n", code)
	if code != 0 {
		msg := stderr.String()
		if code != 1 || strings.Count(msg, "\n") != 1 || !strings.HasPrefix(msg, "traceduck: ") ||
			strings.Contains(msg, "goroutine ") || strings.Contains(msg, "panic") {
			t.Errorf("an error must be one line \"traceduck: ...\", exit code 1: exit %d, stderr %q", code, msg)
		}
		fmt.Fprintf(&out, "stderr: %s", rel(msg))
	} else if stderr.Len() > 0 {
		t.Errorf("ingest succeeded with stderr %q", stderr.String())
	}
	if code != 0 && c.meta["db"] != "" {
		// A database the case gave: a failed ingest leaves it as it was.
		if after, _ := os.ReadFile(db); !bytes.Equal(after, dbBefore) {
			t.Errorf("a failed ingest changed the database file %s", c.meta["db"])
		}
		return out.String()
	}
	if code != 0 && runsBefore == "0" {
		// A failed ingest into a database it created leaves no file.
		if _, err := os.Stat(db); !os.IsNotExist(err) {
			t.Errorf("a failed ingest left the database it created: %v", err)
		}
		return out.String()
	}
	sqldb, err := sql.Open("duckdb", db)
	if err != nil {
		t.Fatal(err)
	}
	defer sqldb.Close()
	if code != 0 {
		if n := dbtest.QueryLines(t, sqldb, "SELECT count(*) FROM runs"); len(n) != 1 || n[0] != runsBefore {
			t.Errorf("a failed ingest left runs: %v, want %s", n, runsBefore)
		}
		return out.String()
	}
	out.WriteString("diagnostics:\n")
	for _, d := range dbtest.QueryLines(t, sqldb, "SELECT severity || ' ' || coalesce(src_line::VARCHAR, '-') || ': ' || message || CASE WHEN count > 1 THEN ' (count ' || count || ')' ELSE '' END FROM diagnostics ORDER BY src_line NULLS LAST, severity, message") {
		fmt.Fprintf(&out, "  %s\n", rel(d))
	}
	if q := c.meta["query"]; q != "" {
		fmt.Fprintf(&out, "query:\n")
		for _, r := range dbtest.QueryLines(t, sqldb, q) {
			fmt.Fprintf(&out, "  %s\n", r)
		}
	}
	return out.String()
}

// runCommands runs the case's command lines (see TestBadInput) and
// describes what the last one did.
func (c *badCase) runCommands(t *testing.T, dir, db, commands string) string {
	t.Helper()
	var lines [][]string
	for _, l := range strings.Split(commands, "\n") {
		if l = strings.TrimSpace(l); l == "" || strings.HasPrefix(l, "# ") {
			continue
		}
		args, err := splitCommand(strings.NewReplacer("$DIR", dir, "$DB", db).Replace(l))
		if err != nil {
			t.Fatalf("%s: %q: %v", c.path, l, err)
		}
		lines = append(lines, args)
	}
	if len(lines) == 0 {
		t.Fatalf("%s: no command", c.path)
	}
	var stdout, stderr bytes.Buffer
	for _, args := range lines[:len(lines)-1] {
		if code := run(t, args, &stdout, &stderr); code != 0 {
			t.Fatalf("%s: %q: exit %d: %s", c.path, args, code, stderr.String())
		}
		stdout.Reset()
		stderr.Reset()
	}
	dbBefore, _ := os.ReadFile(db)
	code := run(t, lines[len(lines)-1], &stdout, &stderr)
	rel := func(s string) string { return strings.ReplaceAll(s, dir+string(filepath.Separator), "") }
	var out strings.Builder
	fmt.Fprintf(&out, "exit %d\n", code)
	if code != 0 {
		msg := stderr.String()
		if (code != 1 && code != 2) || strings.Count(msg, "\n") < 1 || !strings.HasPrefix(msg, "traceduck: ") ||
			strings.Contains(msg, "goroutine ") || strings.Contains(msg, "panic") {
			t.Errorf("an error must begin \"traceduck: \", exit code 1 or 2: exit %d, stderr %q", code, msg)
		}
		if c.meta["db"] != "" {
			if after, _ := os.ReadFile(db); !bytes.Equal(after, dbBefore) {
				t.Errorf("a failed command changed the database file %s", c.meta["db"])
			}
		}
	}
	for _, l := range strings.SplitAfter(stderr.String(), "\n") {
		if l != "" {
			fmt.Fprintf(&out, "stderr: %s", rel(l))
		}
	}
	if c.meta["stdout"] == "yes" {
		for _, l := range strings.SplitAfter(stdout.String(), "\n") {
			if l != "" {
				fmt.Fprintf(&out, "stdout: %s", rel(l))
			}
		}
	}
	if q := c.meta["query"]; q != "" {
		sqldb, err := sql.Open("duckdb", db)
		if err != nil {
			t.Fatal(err)
		}
		defer sqldb.Close()
		fmt.Fprintf(&out, "query:\n")
		for _, r := range dbtest.QueryLines(t, sqldb, q) {
			fmt.Fprintf(&out, "  %s\n", rel(r))
		}
	}
	return out.String()
}

// splitCommand splits a command line at blanks; 'single quotes' keep
// blanks (and nothing else is special).
func splitCommand(line string) ([]string, error) {
	var args []string
	var cur strings.Builder
	inArg, quoted := false, false
	for _, r := range line {
		switch {
		case r == '\'':
			quoted, inArg = !quoted, true
		case (r == ' ' || r == '\t') && !quoted:
			if inArg {
				args = append(args, cur.String())
				cur.Reset()
				inArg = false
			}
		default:
			cur.WriteRune(r)
			inArg = true
		}
	}
	if quoted {
		return nil, fmt.Errorf("a quote is not closed")
	}
	if inArg {
		args = append(args, cur.String())
	}
	return args, nil
}

// decodeHexFile reads hex digits (blanks anywhere between bytes), HH*N (the
// byte HH N times), "quoted" strings in Go syntax and # comments to the
// end of the line.
func decodeHexFile(data []byte) ([]byte, error) {
	var out []byte
	for n, line := range strings.Split(string(data), "\n") {
		for line = strings.TrimSpace(line); line != ""; line = strings.TrimSpace(line) {
			switch {
			case line[0] == '#':
				line = ""
			case line[0] == '"':
				q, err := strconv.QuotedPrefix(line)
				if err != nil {
					return nil, fmt.Errorf("line %d: %v", n+1, err)
				}
				s, _ := strconv.Unquote(q)
				out = append(out, s...)
				line = line[len(q):]
			default:
				end := strings.IndexAny(line, " \t\"#")
				if end < 0 {
					end = len(line)
				}
				tok, times := line[:end], 1
				if h, r, ok := strings.Cut(tok, "*"); ok { // HH*N: the byte HH N times
					var err error
					if times, err = strconv.Atoi(r); err != nil || len(h) != 2 {
						return nil, fmt.Errorf("line %d: %q: expected HH*N", n+1, tok)
					}
					tok = h
				}
				b, err := hex.DecodeString(tok)
				if err != nil {
					return nil, fmt.Errorf("line %d: %v", n+1, err)
				}
				out = append(out, bytes.Repeat(b, times)...)
				line = line[end:]
			}
		}
	}
	return out, nil
}

// badFormats orders the sections of the catalogue and names them.
var badFormats = []struct{ dir, title string }{
	{"detect", "Format detection (no --format)"},
	{"btf", "BTF"},
	{"qnx", "QNX traceprinter text"},
	{"kev", "QNX .kev"},
	{"baget", "Baget binary logs"},
	{"tlv", "TLV standard format and conversion rules"},
	{"tlv-archive", "TLV project archives"},
	{"dtrace", "DTrace and bpftrace output"},
	{"chrome", "Chrome trace event JSON"},
	{"ftrace", "Linux ftrace text"},
	{"cli", "The database and the command line"},
}

// badInputDoc is docs/bad-input.md: per format, a table of the cases.
func badInputDoc(cases []*badCase) string {
	byFormat := map[string][]*badCase{}
	for _, c := range cases {
		byFormat[c.format] = append(byFormat[c.format], c)
	}
	var b strings.Builder
	b.WriteString(badInputIntro)
	known := map[string]bool{}
	for _, f := range badFormats {
		known[f.dir] = true
		cs := byFormat[f.dir]
		if len(cs) == 0 {
			continue
		}
		sort.SliceStable(cs, func(i, j int) bool { return cs[i].path < cs[j].path })
		fmt.Fprintf(&b, "\n## %s\n\n| bad input | traceduck | exit | message | case |\n| --- | --- | --- | --- | --- |\n", f.title)
		for _, c := range cs {
			code, msgs := c.outcome()
			fmt.Fprintf(&b, "| %s | %s | %s | %s | [%s](../cmd/traceduck/badinput/%s) |\n",
				cell(c.meta["class"]), cell(c.meta["does"]), code, msgs, c.id, filepath.ToSlash(c.path))
		}
	}
	for f := range byFormat {
		if !known[f] {
			fmt.Fprintf(&b, "\n(cases of an unlisted section %q: add it to badFormats)\n", f)
		}
	}
	return b.String()
}

// outcome is the exit code and the messages of a case, from its want
// section: the error line, or the diagnostics; for a command that
// succeeded without either, its standard output when the case records it.
func (c *badCase) outcome() (code, msgs string) {
	var lines, stdout []string
	section := ""
	for _, l := range strings.Split(c.want, "\n") {
		switch {
		case strings.HasPrefix(l, "exit "):
			code = strings.TrimPrefix(l, "exit ")
		case strings.HasPrefix(l, "stderr: "):
			lines = append(lines, code1(strings.TrimPrefix(l, "stderr: ")))
		case strings.HasPrefix(l, "stdout: "):
			stdout = append(stdout, code1(strings.TrimPrefix(l, "stdout: ")))
		case l == "diagnostics:" || l == "query:":
			section = l
		case strings.HasPrefix(l, "  ") && section == "diagnostics:":
			lines = append(lines, code1(strings.TrimSpace(l)))
		}
	}
	if len(lines) == 0 && code == "0" {
		lines = stdout
	}
	if len(lines) == 0 {
		return code, "(none)"
	}
	return code, strings.Join(lines, "<br>")
}

// cell escapes text for a Markdown table cell.
func cell(s string) string { return strings.ReplaceAll(s, "|", `\|`) }

// code1 is s as inline code in a table cell.
func code1(s string) string {
	s = strings.ReplaceAll(s, "|", `\|`)
	if strings.Contains(s, "`") {
		return "<code>" + strings.NewReplacer("<", "&lt;", ">", "&gt;", "&", "&amp;").Replace(s) + "</code>"
	}
	return "`" + s + "`"
}

const badInputIntro = `# Bad input: what traceduck does with it

Generated from the cases in ` + "`cmd/traceduck/badinput/testdata/FORMAT/*.txtar`" + ` by
` + "`go test ./cmd/traceduck/badinput -update`" + `; do not edit by hand. Every row
is a test: the case's file is ingested with ` + "`traceduck ingest`" + ` (flags in the case), or
the case's commands are run (a case of the command line: its last command is the one
shown), and the exit code, the message and the diagnostics must be exactly these.

What traceduck does (DESIGN.md, Ingesting):

- **error**: input it cannot read stops the ingest with one line
  ` + "`traceduck: FILE:LINE: what was expected, what was found`" + ` (binary formats:
  ` + "`FILE@OFFSET:`" + `), exit code 1, no stack trace; the database is left exactly as it
  was (the run is one transaction).
- **skipped**: with ` + "`--skip-bad`" + ` the same line or record goes to the run's
  ` + "`diagnostics`" + ` (severity ` + "`error`" + `) and the ingest goes on.
- **recovered**: oddities that do not prevent reading (a transition the state
  machine does not allow, a timestamp going backwards, an interval the trace
  ends inside) never stop an ingest: they are recorded in ` + "`diagnostics`" + ` (severity
  ` + "`warning`" + ` or ` + "`info`" + `, with a count) and the state machine recovers as the
  format's README says.

Messages are shown as printed, with the path of the input relative to the
case's directory; diagnostics as ` + "`SEVERITY LINE: message`" + ` (LINE is the line or
byte offset; ` + "`-`" + ` when the finding has none).

Beyond the input itself (tests in ` + "`cmd/traceduck`" + `, and in
` + "`cmd/traceduck/safety`" + ` those that kill, interrupt or starve the binary: the
files named below): an ingest killed with SIGKILL
at any point (as it opens the database, during the batches, before or after
COMMIT, while the database closes) loses nothing committed before and leaves
no part of its run (` + "`crash_test.go`" + `); a second process opening a database
another one has open fails at once with
` + "`DB: database is locked by another process (PID N, PROGRAM): ...`" + `
(` + "`lock_test.go`" + `); an ingest that fills the disk
fails with ` + "`FILE: disk full, nothing of it was written: ...`" + ` and the database
opens with its earlier runs (` + "`diskfull_test.go`" + `); names, tags and selectors
holding quotes, semicolons or ` + "`--`" + ` are data in every command
(` + "`sqlsafe_test.go`" + `). Output on a terminal (a pseudo-terminal in the test)
shows whatever a terminal acts on escaped, in every format, and a message of
2 MB is one line of at most 4096 bytes (` + "`terminal_test.go`" + `); ` + "`report --html`" + `
and ` + "`--json`" + ` on a full disk fail with
` + "`FILE: disk full, nothing of it was written: ...`" + ` and leave the report that was
there; written to a named pipe or a device (` + "`/dev/null`" + `) they go into it
and leave it what it was, and through a symbolic link they replace its
target and keep the link (` + "`files_test.go`" + `: an output renamed over
` + "`/dev/null`" + ` once made root's a regular file).
Parquet datasets (` + "`parquet_crash_test.go`" + `): an
` + "`ingest --parquet`" + ` killed with SIGKILL at steps of its write (a claim, a file
written, renamed or removed; every step with ` + "`TRACEDUCK_CRASH_LONG=1`" + `), at
random moments of a large one, and as it clears what a dead one left, leaves readers (` + "`views.sql`" + `, ` + "`query --parquet`" + `)
exactly the runs committed before, each whole, and the next ingest clears what
it left (temporary files, claims, partitions of runs not committed) and
ingests the file again; jobs ingesting one file into one dataset at once write
it once, the others refused with
` + "`FILE: already in DIR as run N (same sha256); --force ingests it again`" + ` or
` + "`FILE: another job is writing the same trace (same sha256) into DIR now (pid N ...); --force ingests it again`" + `;
what a live job holds is never cleared.
A named pipe given as the trace is read once,
as standard input is, and Ctrl-C ends the wait for its writer; one given as
` + "`--db`" + ` is refused at once with ` + "`DB: is a named pipe, not a database file`" + `
(` + "`special_test.go`" + `). ` + "`demo --db`" + ` refuses every file it cannot prove
it made and leaves it byte for byte as it was, and an interrupted demo
leaves the old file in place (` + "`TestDemoRefusesUserData`" + `,
` + "`TestDemoInterrupted`" + `). Ctrl-C or SIGTERM interrupts a query DuckDB is
running (` + "`TestLongQueryInterrupted`" + `), and glob patterns are matched in
time linear in the name (` + "`TestManyStarPatterns`" + `, queries' ` + "`TestGlobRegexIsGlob`" + `).

Bounds (each an error past it; see the formats' READMEs): text lines 1 MiB
(every text format); BTF header lines 4096 and entity tables 16 MiB;
traceprinter header lines 4096, continuation lines of an event 1024 and
1 MiB; .kev header 64 KiB, syspage 1 MiB, a combine event 1024 records, 1024
combine events open at once; Baget logs any size (read one block at a time), blocks
16 MiB, descriptions 16 MiB and the limits of docs/baget-format.md §3; TLV
rule, header and resource files 16 MiB each, JSON nesting 200, the rules'
regular expressions 1 s per line, every match of every rule together (a
rule that takes most of it on 3 lines, or more than 1 min plus 10 ms a
line over the log, is no longer tried, with one warning: tested with an
injected clock in ` + "`ingest/tlv/budget_test.go`" + `), archives 256 MiB
(256 entries; only what is used is inflated: the resource file and headers
whole, 16 MiB together, the log as it is read, 256 MiB, never held whole,
so that an archive of 326 KB that inflates to 256 MiB allocates 4.5 MB, not
1.3 GB: ` + "`TestArchiveMemory`" + ` in ingest/tlv); DTrace 32 columns, 64 key=value pairs per line, the aggregation
bounds of its README; Chrome JSON one event 64 MiB, nesting 512.

Times and sizes that would make a run uncomputable or an output unbounded
(each an error naming the bound): every time of a run within ±2^62 ns and a
run spanning at most 2^62 ns, in every format (the
cases ` + "`*/time-past-bound`" + `; a line whose own time is past them is a bad
line, which ` + "`--skip-bad`" + ` skips); a histogram 2^21 buckets and the histograms
printed together 2^21 rows; ` + "`export --chrome`" + ` 1,000,000 CPU load windows. A
database holding runs at the time bounds beside a normal run answers every
command and view for every run, and the same for the normal run as without
them; events without class or name (Chrome without ` + "`cat`" + `: the real
` + "`nanoseconds.json`" + ` of Trace Compass) work in every command and view
(` + "`extreme_test.go`" + `).

A database of many runs (tests in ` + "`schema`" + `): an ingest looks up only the names
(classes, events, states) its own run uses, so a small ingest into a database of
300,000 names allocates a few hundred KB, not the whole symbols table
(` + "`TestIngestReadsOnlyItsSymbols`" + `; ` + "`TRACEDUCK_MANY_NAMES=N`" + ` measures it at any size).
A name (of an object, class, event or state) longer than 32 KiB is kept cut to
its first 32 KiB, with the warning ` + "`a name longer than 32768 bytes: kept cut to its first 32768`" + `
(` + "`TestLongNamesCut`" + `): a 50 MB name no longer makes every later ingest into the
database fail (` + "`TestHugeNameDoesNotPoisonDatabase`" + `), and 160 names of 1 MB commit
instead of aborting the process at COMMIT (` + "`TestManyLongNamesCommit`" + `).
A run that DuckDB cannot hold under an ingest's memory limit (200 values of 1 MB)
fails with ` + "`FILE: DuckDB ran out of memory (an ingest may use 128 MiB), nothing of it was written: ...`" + `
(` + "`TestIngestOutOfMemoryIsClean`" + `); what a killed process left in ` + "`FILE.tmp/`" + ` is removed
when the database is next opened (` + "`TestStaleTempRemoved`" + `). A run id is never given twice:
after ` + "`DROP TABLE runs CASCADE`" + ` or ` + "`DELETE FROM runs`" + ` through ` + "`query`" + `, the next run takes one more
than any run_id of any table, not 1 again among the rows left (` + "`TestRunIDsNeverReused`" + `).
An ingest that creates its ` + "`--db`" + ` and stores no run leaves no file behind
(` + "`TestFailedIngestCreatesNoDatabase`" + `). A view or macro of the library dropped through
` + "`query`" + ` (` + "`DROP VIEW state_summary`" + `) is created again at the next open
(` + "`queries.TestInstallRecreatesDroppedViews`" + `). A database this process may not write
(another user's, mode 444) is queried read-only, with a warning when its views are not
this traceduck's (` + "`TestQueryReadOnlyDatabase`" + `).
`
