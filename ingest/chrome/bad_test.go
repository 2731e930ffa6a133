package chrome_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/traceduck/traceduck/ingest"
	"github.com/traceduck/traceduck/internal/dbtest"
	"github.com/traceduck/traceduck/schema"
)

// ingestBytes ingests data as a file named name, format chrome.
func ingestBytes(t *testing.T, db *schema.DB, name, data string, skipBad bool) (ingest.Result, error) {
	t.Helper()
	src := ingest.NewSource(name, strings.NewReader(data), int64(len(data)))
	return ingest.Opened(context.Background(), db, src, ingest.Options{Format: "chrome", SkipBad: skipBad, Force: true})
}

// TestBadInputMessages: input that is not a readable trace stops the
// ingest with FILE@OFFSET (the byte where the fault is, from 0) and what
// was expected and found; the database is left as it was.
func TestBadInputMessages(t *testing.T) {
	deep := `[{"ph":"i","ts":1,"args":` + strings.Repeat("[", 600) + strings.Repeat("]", 600) + `}]`
	db := dbtest.Open(t)
	if _, err := ingestBytes(t, db, "good.json", `[{"ph":"i","ts":1,"pid":1,"tid":1}]`, false); err != nil {
		t.Fatal(err)
	}
	before := dbtest.Dump(t, db.SQL())
	for _, tc := range []struct{ in, want string }{
		{``, `bad.json@0: expected a JSON array of trace events or an object with "traceEvents", found the end of the file`},
		{" \n hello", `bad.json@3: expected a JSON array of trace events or an object with "traceEvents", found "hello"`},
		{`[{"ph":"B","ts":1,"pid":1,"tid":1},{"ph":"E","ts":tru}]`, `bad.json@50: invalid JSON: expected a value, found "tru}"`},
		{`[{"ts":1}]`, `bad.json@1: expected "ph" (the event's phase) in every event, found an event without it`},
		{`[{"ph":"B"}]`, `bad.json@1: expected "ts" (the event's time) in every event but metadata ("ph": "M"), found a "B" event without it`},
		{`[{"ph":"B","ts":"soon"}]`, `bad.json@16: "ts": expected the event's time in microseconds (a number or a numeric string), found "\"soon\""`},
		{`[{"ph":"B","ts":1e300}]`, `bad.json@16: "ts": expected the event's time in microseconds, at most 9223372036854775.807 either way (the events table's int64 ns), found "1e300"`},
		{`[{"ph":"X","ts":1,"dur":"-9223372036854775.808"}]`, `bad.json@24: "dur": expected the slice's duration in microseconds, at most 9223372036854775.807 either way (the events table's int64 ns), found "\"-9223372036854775.808\""`},
		{`[{"ph":"X","ts":1,"dur":{}}]`, `bad.json@24: "dur": expected the slice's duration in microseconds (a number or a numeric string), found "{}"`},
		{`[{"ph":"","ts":1}]`, `bad.json@7: "ph": expected the event's phase (a string such as "B"), found "\"\""`},
		{`[{"ph":"i","ts":1,"pid":[1]}]`, `bad.json@24: "pid": expected a number or a string, found an array`},
		{`[{"ph":"i","ts":1,"name":{}}]`, `bad.json@25: "name": expected a string, found an object`},
		{`[{"ph":"b","ts":1,"id2":{"x":1}}]`, `bad.json@24: "id2": expected {"local": id} or {"global": id}, found "{\"x\":1}"`},
		{`[5]`, `bad.json@1: expected an event object, found "5"`},
		{`[{"ph":"i","ts":1} {"ph":"i","ts":2}]`, `bad.json@19: expected ',' or ']' after an event, found "{\"ph\":\"i\",\"ts\":2}]"`},
		{`[{"ph":"i","ts":1},,{"ph":"i","ts":2}]`, `bad.json@19: expected an event, found ','`},
		{`[{"ph":"i","ts":1]`, `bad.json@17: invalid JSON: expected ',' or '}' after a member, found "]"`},
		{"[{\"ph\":\"i\",\"ts\":1,\"name\":\"abc\n},\n{\"ph\":\"i\",\"ts\":2}]", `bad.json@29: invalid JSON: expected a character of a string (control characters must be escaped), found "\n"`},
		{`[{"ph":"i","ts":01}]`, `bad.json@17: invalid JSON: expected ',' or '}' after a member, found "1}"`},
		{`[{ph:"i"}]`, `bad.json@2: invalid JSON: expected a member name in double quotes, found "ph:\"i\"}"`},
		{`[{"ph":"i","ts":1,"name":"a\x"}]`, `bad.json@27: invalid JSON: expected an escape (\" \\ \/ \b \f \n \r \t \uXXXX), found "\\x\"}"`},
		{deep, `bad.json@537: invalid JSON: arrays and objects nested deeper than 512`},
		{`[{"ph":"i","ts":1}] x`, `bad.json@20: expected the end of the file after the trace, found "x"`},
		{`{"a":1}`, `bad.json@0: expected an array of events or an object with a "traceEvents" member, found an object without one`},
		{`{"traceEvents": 5}`, `bad.json@16: "traceEvents": expected an array of events, found "5}"`},
		{`{traceEvents: []}`, `bad.json@1: expected a member name of the top-level object in double quotes, found "traceEvents"`},
		{`{"traceEvents":[] "x":1}`, `bad.json@18: expected ',' or '}' after a member of the top-level object, found "\"x\":1}"`},
		{`{"traceEvents":[],"meta":{"a":}}`, `bad.json@30: top-level member "meta": invalid JSON: expected a value, found "}"`},
		{`{"traceEvents"[]}`, `bad.json@14: expected ':' after the member name "traceEvents", found "[]}"`},
	} {
		t.Run(tc.want, func(t *testing.T) {
			_, err := ingestBytes(t, db, "bad.json", tc.in, false)
			var ie *schema.InputError
			if !errors.As(err, &ie) {
				t.Fatalf("got %v, want an InputError", err)
			}
			if err.Error() != tc.want {
				t.Errorf("got  %s\nwant %s", err, tc.want)
			}
			if after := dbtest.Dump(t, db.SQL()); after != before {
				t.Errorf("database changed by a failed ingest:\n%s", after)
			}
		})
	}
}

// TestSkipBad: with --skip-bad each bad event is one diagnostic (severity
// error, src_line its byte offset) and the others are read; after a fault
// in the brackets reading resumes at the next event.
func TestSkipBad(t *testing.T) {
	in := `[{"ph":"B","ts":1,"pid":1,"tid":1,"name":"A"},
{"ph":"B","ts":"x","pid":1,"tid":1},
{"ph":"i","ts":2,"pid":1,"tid":1]]],
{"ph":"E","ts":3,"pid":1,"tid":1}
{"ph":"i","ts":4,"pid":1,"tid":1},
5,
{"ph":"i","ts":6,"pid":1,"tid":1}]`
	db := dbtest.Open(t)
	res, err := ingestBytes(t, db, "skip.json", in, true)
	if err != nil {
		t.Fatal(err)
	}
	if res.Events != 4 {
		t.Errorf("events: %d, want 4 (the B at 1, the E at 3, the instants at 4 and 6)", res.Events)
	}
	got := dbtest.Query(t, db.SQL(), "SELECT src_line, severity, message FROM diagnostics ORDER BY src_line")
	want := `62 | error | "ts": expected the event's time in microseconds (a number or a numeric string), found "\"x\""
116 | error | invalid JSON: expected ',' or '}' after a member, found "]"
155 | error | expected ',' or ']' after an event, found "{\"ph\":\"i\",\"ts\":4,\"pid\":1"
190 | error | expected an event object, found "5"
`
	if got != want {
		t.Errorf("diagnostics:\n%s\nwant:\n%s", got, want)
	}
	if got := dbtest.Query(t, db.SQL(), intervalsSQL); got != "1/1 0 A 1000 3000 2000\n" {
		t.Errorf("intervals: %s", got)
	}
}

// TestLenient: files that are not strict JSON the way a writer that
// stopped early leaves them are read as far as they are whole, with one
// diagnostic, as Chrome's viewer reads them.
func TestLenient(t *testing.T) {
	ev := `{"ph":"i","ts":1,"pid":1,"tid":1}`
	db := dbtest.Open(t) // one run per case (the same bytes again: Force)
	for _, tc := range []struct {
		in     string
		events int64
		diag   string
	}{
		{`[` + ev + `,` + ev + `,]`, 2, "68 | info | a comma after the last event: ignored, as Chrome's viewer does"},
		{`[` + ev + `,` + ev, 2, "68 | warning | the file ends without the ']' that closes the event array (a writer that stopped before the end): read up to the end, as Chrome's viewer does"},
		{`[` + ev + `,` + ev + ",\n", 2, "70 | warning | the file ends without the ']' that closes the event array (a writer that stopped before the end): read up to the end, as Chrome's viewer does"},
		{`[` + ev + `,` + ev + `,{"ph":"i","ts":3,"pi`, 2, "69 | warning | the file ends inside an event (a writer that stopped mid-event): that event is left out"},
		{`[` + ev + `,` + ev + `,{"ph":"i","ts":3,"pid":1,"tid":1}`, 3, "102 | warning | the file ends without the ']' that closes the event array (a writer that stopped before the end): read up to the end, as Chrome's viewer does"},
		{`{"traceEvents":[` + ev + `]`, 1, "50 | warning | the file ends without the '}' that closes the top-level object (a writer that stopped before the end): read up to the end"},
		{`{"traceEvents":[` + ev + `],`, 1, "51 | warning | the file ends without the '}' that closes the top-level object (a writer that stopped before the end): read up to the end"},
		{`{"traceEvents":[` + ev + `],"meta":{"a":[1,`, 1, "66 | warning | the file ends without the '}' that closes the top-level object (a writer that stopped before the end): read up to the end"},
		{`{"traceEvents":[` + ev + `],}`, 1, "51 | info | a comma before the closing '}' of the top-level object: ignored"},
		{`{"traceEvents":[` + ev, 1, "49 | warning | the file ends without the ']' that closes the event array (a writer that stopped before the end): read up to the end, as Chrome's viewer does"},
		{"\xef\xbb\xbf[" + ev + "]\n", 1, ""},
		{`[]`, 0, ""},
		{`[{}]`, 0, "1 | info | an empty event {}: skipped, as Trace Compass does"},
	} {
		t.Run(tc.in, func(t *testing.T) {
			res, err := ingestBytes(t, db, "lenient.json", tc.in, false)
			if err != nil {
				t.Fatal(err)
			}
			if res.Events != tc.events {
				t.Errorf("events: %d, want %d", res.Events, tc.events)
			}
			got := strings.TrimSuffix(dbtest.Query(t, db.SQL(), "SELECT src_line, severity, message FROM diagnostics WHERE run_id = ? ORDER BY src_line", res.RunID), "\n")
			if got != tc.diag {
				t.Errorf("diagnostics:\n%s\nwant:\n%s", got, tc.diag)
			}
		})
	}
}

// TestReadError: a read error of the file is reported as such, not as a
// trace that ended early.
func TestReadError(t *testing.T) {
	db := dbtest.Open(t)
	src := ingest.NewSource("broken.json", &failingReader{data: []byte(`[{"ph":"i","ts":1},`)}, -1)
	_, err := ingest.Opened(context.Background(), db, src, ingest.Options{Format: "chrome"})
	if err == nil || err.Error() != "broken.json: disk on fire" {
		t.Errorf("got %v", err)
	}
}

type failingReader struct {
	data []byte
	done bool
}

func (r *failingReader) Read(p []byte) (int, error) {
	if r.done {
		return 0, errors.New("disk on fire")
	}
	r.done = true
	return copy(p, r.data), nil
}
