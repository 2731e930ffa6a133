package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"unicode/utf8"
	"unsafe"
)

// evilName is an object name a terminal would act on: ESC [31m (red),
// BEL, RIGHT-TO-LEFT OVERRIDE; evilShown is how traceduck shows it.
const (
	evilName  = "\x1b[31mWork\a\u202e"
	evilShown = `\x1b[31mWork\x07\u202e`
)

// evilDB ingests a BTF trace whose task has evilName.
func evilDB(t *testing.T, dir string) string {
	t.Helper()
	trace := writeFile(t, dir, "evil.btf", []byte("#version 2.1.4\n#timeScale ns\n"+
		"0,Timer,0,T,"+evilName+",0,activate\n0,Core_0,0,T,"+evilName+",0,start\n100,Core_0,0,T,"+evilName+",0,terminate\n"))
	db := filepath.Join(dir, "t.duckdb")
	mustRun(t, dir, nil, "ingest", "--db", db, trace)
	return db
}

// acting returns the first byte or rune of out a terminal acts on (but
// for a newline and, with crlf, a carriage return before one), or "".
func acting(out string, crlf bool) string {
	for i := 0; i < len(out); {
		r, size := utf8.DecodeRuneInString(out[i:])
		switch {
		case r == '\n', crlf && r == '\r' && strings.HasPrefix(out[i:], "\r\n"):
		case r == utf8.RuneError && size == 1:
			return fmt.Sprintf("a byte that is not UTF-8 (%#x) at byte %d", out[i], i)
		case r < 0x20, r == 0x7f, r >= 0x80 && r <= 0x9f, r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069, r == 0x200e, r == 0x200f:
			return fmt.Sprintf("%U at byte %d", r, i)
		}
		i += size
	}
	return ""
}

// The outputs for reading (table and markdown, the stats tree, hist's
// DTrace layout) show a name a terminal would act on escaped, piped or
// not; csv and json to a pipe are the data, byte for byte.
func TestOutputForReadingEscapes(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db := evilDB(t, dir)
	for _, args := range [][]string{
		{"query", "SELECT name, 'a' || chr(0) || 'b' || chr(13) || 'c' || chr(8) AS more FROM objects"},
		{"query", "-o", "markdown", "SELECT name FROM objects"},
		{"states", "--kind", "task"},
		{"stats"},
		{"stats", "-o", "markdown"},
		{"events"},
		{"hist", "--state", "running"},
		{"hist", "--state", "running", "--pool"},
		{"hist", "--state", "running", "-o", "table"},
		{"query", "SELECT 1 AS \"" + evilName + "\""},
	} {
		args = append([]string{args[0], "--db", db}, args[1:]...)
		r := td(t, dir, args...)
		if r.code != 0 {
			t.Errorf("%q: %s", args, r)
			continue
		}
		if a := acting(r.stdout+r.stderr, false); a != "" {
			t.Errorf("%q prints %s:\n%s", args, a, r)
		}
		if !strings.Contains(r.stdout, evilShown) && !strings.Contains(r.stdout, strings.ReplaceAll(evilShown, "[", `\[`)) {
			t.Errorf("%q does not show %s:\n%s", args, evilShown, r)
		}
	}
	r := td(t, dir, "query", "--db", db, "SELECT 'a' || chr(0) || 'b' || chr(13) || 'c' || chr(8) AS more")
	if want := "more\n-------------\na\\x00b\\rc\\x08\n"; r.stdout != want {
		t.Errorf("table output: %q, want %q", r.stdout, want)
	}

	// Data to a pipe: exact.
	csv := mustRun(t, dir, nil, "query", "--db", db, "-o", "csv", "SELECT name AS object FROM objects WHERE kind = 'task'")
	if csv != "object\r\n"+evilName+"\r\n" {
		t.Errorf("csv to a pipe: %q", csv)
	}
	js := mustRun(t, dir, nil, "query", "--db", db, "-o", "json", "SELECT name AS object FROM objects WHERE kind = 'task'")
	var rows []map[string]string
	if err := json.Unmarshal([]byte(js), &rows); err != nil || len(rows) != 1 || rows[0]["object"] != evilName {
		t.Errorf("json to a pipe: %v %q", err, js)
	}
}

// openPTY opens a pseudo-terminal: the master (what the terminal
// shows) and the slave (the program's side).
func openPTY(t *testing.T) (master, slave *os.File) {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skip("the pseudo-terminal test runs on Linux")
	}
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminal: %v", err)
	}
	var unlock int32
	var n uint32
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, m.Fd(), syscall.TIOCSPTLCK, uintptr(unsafe.Pointer(&unlock))); e != 0 {
		m.Close()
		t.Skipf("unlock the pseudo-terminal: %v", e)
	}
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, m.Fd(), syscall.TIOCGPTN, uintptr(unsafe.Pointer(&n))); e != 0 {
		m.Close()
		t.Skipf("pseudo-terminal number: %v", e)
	}
	s, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		m.Close()
		t.Skipf("open the pseudo-terminal: %v", err)
	}
	return m, s
}

// onTerminal runs traceduck with standard output on a pseudo-terminal
// and returns what the terminal got, less the CR its line discipline
// puts before each LF: what traceduck wrote to it.
func onTerminal(t *testing.T, dir string, args ...string) string {
	t.Helper()
	m, s := openPTY(t)
	defer m.Close()
	cmd := exec.Command(binary, args...)
	cmd.Dir = dir
	cmd.Stdout = s
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		s.Close()
		t.Fatal(err)
	}
	s.Close()
	var out bytes.Buffer
	done := make(chan error, 1)
	go func() {
		_, err := io.Copy(&out, m)
		done <- err
	}()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("traceduck %q: %v\n%s", args, err, stderr.String())
	}
	// Once the program has ended, reading the master fails with EIO.
	if err := <-done; err != nil && !errors.Is(err, syscall.EIO) {
		t.Fatal(err)
	}
	return strings.ReplaceAll(out.String(), "\r\n", "\n")
}

// On a terminal, whatever the output format, nothing a terminal acts on
// reaches it: csv and json too (a user who types the command sees the
// data, escaped; piped, it stays exact, see above).
func TestTerminalOutput(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db := evilDB(t, dir)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"query", "--db", db, "-o", "csv", "SELECT name AS object, 'a' || chr(13) || 'b' AS cr FROM objects WHERE kind = 'task'"},
			"object,cr\r\n" + evilShown + `,"a\rb"` + "\r\n"},
		{[]string{"query", "--db", db, "-o", "json", "SELECT name AS object, chr(155) || '2J' AS csi FROM objects WHERE kind = 'task'"},
			"[\n" + `  {"object": "\u001b[31mWork\u0007\u202e", "csi": "\u009b2J"}` + "\n]\n"},
		{[]string{"query", "--db", db, "SELECT name AS object FROM objects WHERE kind = 'task'"},
			"object\n----------------------\n" + evilShown + "\n"},
	} {
		got := onTerminal(t, dir, c.args...)
		if got != c.want {
			t.Errorf("%q on a terminal:\n%q\nwant\n%q", c.args, got, c.want)
		}
		if a := acting(got, true); a != "" {
			t.Errorf("%q on a terminal shows %s", c.args, a)
		}
	}
	// A rune cut between two writes of a large output is one rune.
	big := onTerminal(t, dir, "query", "--db", db, "-o", "csv", "SELECT repeat('é"+"\u202e"+"', 20000) AS s")
	if want := "s\r\n" + strings.Repeat(`é\u202e`, 20000) + "\r\n"; big != want {
		t.Errorf("a large output on a terminal: %d bytes, want %d", len(big), len(want))
	}
}

// --safe-csv: a text cell a spreadsheet would run as a formula (=, +, -,
// @, or a tab or carriage return first) gets a leading '; numbers stay
// numbers. Without it, the cells are the data.
func TestSafeCSV(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	const q = `SELECT '=HYPERLINK("http://x/?"&A1,"y")' AS "=cmd", -5 AS n, -0.5 AS f, '-5' AS s, '@SUM(A1)' AS a, '+1' AS p, chr(9) || '=1' AS tab, chr(13) || '=1' AS cr, 'a=b' AS ok, NULL AS nul`
	got := mustRun(t, dir, nil, "query", "--db", ":memory:", "-o", "csv", "--safe-csv", q)
	want := "'=cmd,n,f,s,a,p,tab,cr,ok,nul\r\n" +
		`"'=HYPERLINK(""http://x/?""&A1,""y"")",-5,-0.5,'-5,'@SUM(A1),'+1,'` + "\t=1,\"'\r=1\",a=b,\r\n"
	if got != want {
		t.Errorf("--safe-csv:\n%q\nwant\n%q", got, want)
	}
	got = mustRun(t, dir, nil, "query", "--db", ":memory:", "-o", "csv", q)
	want = "=cmd,n,f,s,a,p,tab,cr,ok,nul\r\n" +
		`"=HYPERLINK(""http://x/?""&A1,""y"")",-5,-0.5,-5,@SUM(A1),+1,` + "\"\t=1\",\"\r=1\",a=b,\r\n"
	if got != want {
		t.Errorf("csv without --safe-csv:\n%q\nwant\n%q", got, want)
	}
	r := td(t, dir, "states", "--db", ":memory:", "--safe-csv")
	if want := "traceduck: --safe-csv is for --output csv (the output is table)\n"; r.code != 2 || !strings.HasPrefix(r.stderr, want) {
		t.Errorf("--safe-csv without csv: %s, want exit 2 and %q", r, want)
	}
}

// A message of 2 MB (DuckDB echoes the value it could not convert) is
// one line of at most maxMessage bytes before its escapes: its start and
// its end, and how much was left out.
func TestMessageCut(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	writeMessage(&b, "Conversion Error: Could not convert string '"+strings.Repeat("\x00", 2_000_000)+"' to INT32")
	got := b.String()
	if strings.Count(got, "\n") != 1 || !strings.HasSuffix(got, "\n") {
		t.Fatalf("not one line: %d line breaks", strings.Count(got, "\n"))
	}
	if a := acting(got, false); a != "" {
		t.Errorf("the message shows %s", a)
	}
	head := "traceduck: Conversion Error: Could not convert string '" + strings.Repeat(`\x00`, 3072-len("traceduck: Conversion Error: Could not convert string '")) + " [... "
	tail := " bytes left out ...] " + strings.Repeat(`\x00`, 1024-len("' to INT32")) + "' to INT32\n"
	if !strings.HasPrefix(got, head) || !strings.HasSuffix(got, tail) {
		t.Errorf("a message of 2 MB is shown as %d bytes: %.200q ... %.200q", len(got), got, got[max(0, len(got)-200):])
	}
}
