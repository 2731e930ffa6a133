package schema

import (
	"fmt"
	"strconv"
)

// Severity of a diagnostic.
type Severity string

const (
	Info    Severity = "info"    // the input uses something beyond the format's definition; handled
	Warning Severity = "warning" // the input contradicts itself; recovered in a documented way
	Error   Severity = "error"   // a line was unreadable and skipped (--skip-bad)
)

// DiagID names a diagnostic row so that repeats of the same finding only
// count up instead of adding rows.
type DiagID int32

// maxDiagnostics bounds the diagnostics of one run: a file of garbage must
// not grow the table without bound. Past it, findings are only counted.
const maxDiagnostics = 10000

type diagRow struct {
	line     int64
	seq      Seq
	severity Severity
	message  string
	count    int64
}

// InputError is a syntax error in a trace: FILE:LINE: msg for text formats,
// FILE@OFFSET: msg for binary ones.
type InputError struct {
	File   string
	Line   int64 // 1-based; 0 when Offset is used
	Offset int64 // byte offset for binary formats; -1 for text
	Msg    string
}

func (e *InputError) Error() string {
	if e.Offset >= 0 {
		return e.File + "@" + strconv.FormatInt(e.Offset, 10) + ": " + e.Msg
	}
	return e.File + ":" + strconv.FormatInt(e.Line, 10) + ": " + e.Msg
}

// Diag records a new diagnostic row and returns its id for DiagRepeat.
func (w *RunWriter) Diag(sev Severity, line int64, seq Seq, msg string) DiagID {
	if len(w.diags) >= maxDiagnostics {
		w.diagOverflow++
		return -1
	}
	w.diags = append(w.diags, diagRow{line: line, seq: seq, severity: sev, message: msg, count: 1})
	return DiagID(len(w.diags) - 1)
}

// Diagf is Diag with a format.
func (w *RunWriter) Diagf(sev Severity, line int64, seq Seq, format string, args ...any) DiagID {
	return w.Diag(sev, line, seq, fmt.Sprintf(format, args...))
}

// DiagRepeat counts one more occurrence of a recorded diagnostic.
func (w *RunWriter) DiagRepeat(id DiagID) {
	if id < 0 || int(id) >= len(w.diags) {
		w.diagOverflow++
		return
	}
	w.diags[id].count++
}

// BadLine reports a syntax error at a line. Without SkipBad it returns the
// error that stops the ingest; with SkipBad the line is recorded in
// diagnostics (severity error) and BadLine returns nil so the ingester
// skips the line and continues.
func (w *RunWriter) BadLine(line int64, format string, args ...any) error {
	e := &InputError{File: w.info.Source, Line: line, Offset: -1, Msg: fmt.Sprintf(format, args...)}
	return w.bad(e, line)
}

// BadOffset is BadLine for binary formats.
func (w *RunWriter) BadOffset(offset int64, format string, args ...any) error {
	e := &InputError{File: w.info.Source, Offset: offset, Msg: fmt.Sprintf(format, args...)}
	return w.bad(e, offset)
}

// BadAt is BadLine, or BadOffset for a format whose positions are byte
// offsets (RunInfo.Offsets): for machines that two formats share.
func (w *RunWriter) BadAt(pos int64, format string, args ...any) error {
	if w.info.Offsets {
		return w.BadOffset(pos, format, args...)
	}
	return w.BadLine(pos, format, args...)
}

func (w *RunWriter) bad(e *InputError, pos int64) error {
	if !w.info.SkipBad {
		return e
	}
	w.Diag(Error, pos, NoSeq, e.Msg)
	return nil
}
