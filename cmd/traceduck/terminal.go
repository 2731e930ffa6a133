package main

import (
	"errors"
	"io"
	"os"
	"strings"
	"unicode/utf8"

	"github.com/marcboeker/go-duckdb"
	"golang.org/x/term"

	"github.com/traceduck/traceduck/internal/safetext"
)

// What traceduck prints, and what a terminal would act on in it (ESC
// sequences that move the cursor, retitle the window or paste into the
// shell; BEL; NUL; a carriage return that overwrites; bidi controls that
// reorder the line). Trace and database text reaches the screen in
// names, values and echoed input, so:
//
//   - Standard output on a terminal goes through one filter, termWriter,
//     set on the root command: every command's output, whatever its
//     format, shows such characters escaped (safetext.EscapeText: \x1b,
//     \u202e, ...; line breaks and tabs kept).
//   - Messages on standard error are written by writeMessage alone:
//     escaped (line breaks too: a message is one line, but for DuckDB's
//     own errors, whose further lines are indented) and cut to
//     maxMessage bytes.
//   - The outputs for reading escape their cells terminal or not, so that
//     a cell stays one line and the columns align: --output table and
//     markdown, the stats tree, hist's DTrace layout.
//   - Data written to a pipe or a file is the data, byte for byte: csv,
//     json, convert's log, report --json/--html/--markdown (Markdown and
//     HTML escape for their own syntax, JSON by itself).

// maxMessage bounds the bytes of a message on standard error (before its
// escapes): a longer one keeps its start and end (safetext.Cut).
const maxMessage = 4096

// isTerminal reports whether w is a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// termWriter escapes what a terminal acts on (see above). It holds back
// the bytes of a rune cut between two writes and a trailing carriage
// return (is a newline next?) until the next write or Flush.
type termWriter struct {
	w       io.Writer
	pending []byte
}

// terminalOut is w, filtered by a termWriter when w is a terminal.
func terminalOut(w io.Writer) io.Writer {
	if isTerminal(w) {
		return &termWriter{w: w}
	}
	return w
}

func (t *termWriter) Write(p []byte) (int, error) {
	buf := append(t.pending, p...)
	n := len(buf)
	// Hold back an incomplete rune at the end (at most 3 bytes), and a
	// trailing '\r'.
	for i := 1; i <= utf8.UTFMax-1 && i <= n; i++ {
		if utf8.RuneStart(buf[n-i]) {
			if !utf8.FullRune(buf[n-i:]) {
				n -= i
			}
			break
		}
	}
	if n > 0 && buf[n-1] == '\r' {
		n--
	}
	t.pending = append([]byte(nil), buf[n:]...)
	if _, err := io.WriteString(t.w, safetext.EscapeText(string(buf[:n]))); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Flush writes what Write held back.
func (t *termWriter) Flush() error {
	if len(t.pending) == 0 {
		return nil
	}
	s := safetext.EscapeText(string(t.pending))
	t.pending = nil
	_, err := io.WriteString(t.w, s)
	return err
}

// flushOut flushes w when it is a termWriter.
func flushOut(w io.Writer) {
	if t, ok := w.(*termWriter); ok {
		_ = t.Flush()
	}
}

// writeMessage writes a message on standard error: "traceduck: MSG",
// escaped and cut (see above), one line.
func writeMessage(w io.Writer, msg string) {
	writeLine(w, "traceduck: "+msg)
}

// writeLine writes a line of a message (a finding convert reports, say):
// escaped and cut as a message is.
func writeLine(w io.Writer, text string) {
	io.WriteString(w, safetext.Escape(safetext.Cut(text, maxMessage))+"\n")
}

// writeError writes err as writeMessage does. Two kinds of error keep
// their lines, each line after the first indented so that none reads as
// a message of its own: DuckDB's (a parser error points at the SQL under
// it) and a report's crossed thresholds (one per line).
func writeError(w io.Writer, err error) {
	var lines []string
	var de *duckdb.Error
	var rg *regressionError
	switch {
	case errors.As(err, &rg):
		lines = rg.lines
	case errors.As(err, &de):
		lines = strings.Split(strings.TrimRight(safetext.Cut(err.Error(), maxMessage), "\n"), "\n")
	default:
		writeMessage(w, err.Error())
		return
	}
	var b strings.Builder
	for i, l := range lines {
		if i == 0 {
			b.WriteString("traceduck: ")
		} else {
			b.WriteString("  ")
		}
		b.WriteString(safetext.Escape(l))
		b.WriteByte('\n')
	}
	io.WriteString(w, b.String())
}

// cellText is a cell of an output for reading: one line, nothing a
// terminal acts on.
func cellText(s string) string { return safetext.Escape(s) }
