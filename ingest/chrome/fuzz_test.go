package chrome_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/traceduck/traceduck/ingest/chrome"
	"github.com/traceduck/traceduck/internal/dbtest"
	"github.com/traceduck/traceduck/schema"
)

// fuzzSeeds are inputs at the edges of the format.
var fuzzSeeds = []string{
	``, `[`, `[]`, `{}`, `[{}]`, `{"traceEvents":[]}`, `{"traceEvents":[`, `[{"ph":"B","ts":1}`,
	`[{"ph":"B","ts":1,"pid":1,"tid":1},{"ph":"E","ts":0,"pid":1,"tid":1}]`, // E before its B
	`[{"ph":"E","ts":1,"pid":1,"tid":1},{"ph":"E","ts":2,"pid":1,"tid":1,"name":"x"}]`,
	`[{"ph":"X","ts":5,"dur":-3,"pid":1,"tid":1},{"ph":"X","ts":9223372036854775,"dur":1e3,"pid":1,"tid":1}]`,
	`[{"ph":"X","ts":1,"pid":1,"tid":1},{"ph":"X","ts":0,"dur":1,"pid":1,"tid":1},{"ph":"B","ts":0.5,"pid":1,"tid":1}]`,
	`[{"ph":"X","ts":0,"dur":10,"pid":1,"tid":1},{"ph":"X","ts":5,"dur":10,"pid":1,"tid":1},{"ph":"X","ts":7,"dur":1,"pid":1,"tid":1}]`,
	`[{"ph":"b","ts":1,"cat":"c","id":1,"name":"a"},{"ph":"b","ts":2,"cat":"c","id":1,"name":"b"},{"ph":"e","ts":3,"cat":"c","id":1,"name":"a"},{"ph":"e","ts":4,"cat":"c","id":1}]`,
	`[{"ph":"b","ts":1},{"ph":"S","ts":1},{"ph":"N","ts":1},{"ph":"b","ts":1,"id2":{"local":"0x1"},"pid":"p"}]`,
	`[{"ph":"S","ts":1,"id":1,"name":"a"},{"ph":"S","ts":2,"id":1,"name":"a"},{"ph":"p","ts":3,"id":1,"name":"a","args":{"step":5}},{"ph":"T","ts":4,"id":1,"name":"a","args":[]},{"ph":"F","ts":5,"id":1,"name":"a"},{"ph":"F","ts":6,"id":1,"name":"a"}]`,
	`[{"ph":"C","ts":1,"name":"c","args":{"a":1,"b":"2","c":"x","d":null,"e":1e400,"\u0066":-0}},{"ph":"C","ts":2,"name":"c","args":5},{"ph":"C","ts":3}]`,
	`[{"ph":"N","ts":1,"id":1,"name":"o"},{"ph":"N","ts":2,"id":1,"name":"o"},{"ph":"D","ts":3,"id":1,"name":"o"},{"ph":"D","ts":4,"id":1,"name":"o"},{"ph":"O","ts":5,"id":1,"name":"o"}]`,
	`[{"ph":"M","name":"thread_name","pid":1,"tid":1,"args":{"name":"\ud800x\udc00\ud83d\ude00"}},{"ph":"M","name":"process_name","args":{"name":1}},{"ph":"M","name":"other","pid":1,"args":[1]},{"ph":"M","name":"thread_sort_index","pid":1,"args":{"sort_index":1}}]`,
	`[{"ph":"i","ts":"1.0005","s":"g"},{"ph":"I","ts":"-1e-3","s":"p","pid":1},{"ph":"n","ts":1e2},{"ph":"Zz","ts":0},{"ph":"s","ts":1,"id":1},{"ph":"P","ts":1}]`,
	`[{"ph":"i","ts":1,"name":"a\"b\\c\n","cat":"\u0000","args":{"x":"\ud800"}}]`,
	"[{\"ph\":\"i\",\"ts\":1,\"name\":\"\xff\xfe\",\"pid\":\"\xc3\"}]",
	`[{"ph":"i","ts":1}, {"ph":"i","ts":2} {"ph":"i","ts":3},, 7, [1], {"ph":"i","ts":4]}, {"ph":"i","ts":5}]`,
	"[{\"ph\":\"i\",\"ts\":1,\"name\":\"open\n{\"ph\":\"i\",\"ts\":2}]",
	`{"traceEvents":[{"ph":"i","ts":1}],"displayTimeUnit":"ns","traceEvents":[{"ph":"i","ts":2}],"x":{"y":[1,2,{"z":null}]}}`,
	`{"systemTraceEvents":"` + string(bytes.Repeat([]byte("x"), 300)) + `","traceEvents":[{"ph":"i","ts":1}]}`,
	`[{"ph":"i","ts":1,"args":` + string(bytes.Repeat([]byte("["), 520)) + `]`,
	`[{"ph":"i","ts":00},{"ph":"i","ts":1.},{"ph":"i","ts":.5},{"ph":"i","ts":1e},{"ph":"i","ts":-},{"ph":"i","ts":+1}]`,
	"\xef\xbb\xbf\t\r\n [ {\"ph\":\"i\",\"ts\":1} ] \n",
}

// FuzzIngest feeds arbitrary bytes to the ingester, without DuckDB (the
// batches go to a sink that checks them). Each input is ingested twice,
// stopping at the first bad event and with SkipBad; the two agree with
// each other, and with encoding/json where the input is plain JSON of
// simple events.
func FuzzIngest(f *testing.F) {
	dbtest.AddSeeds(f, 0, "testdata/*.json")
	// Heads of the larger files: the fuzzer minimizes every input it finds
	// interesting, which takes minutes from an 88 KB one.
	dbtest.AddSeeds(f, 3000, filepath.Join(externalDir, "*.json"), samplePath)
	for _, s := range fuzzSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		checkIngest(t, data)
	})
}

const fuzzName = "fuzz.json"

var inputErrRE = regexp.MustCompile(`^` + regexp.QuoteMeta(fuzzName) + `@([0-9]+): \S`)

func checkIngest(t *testing.T, data []byte) {
	strict := runIngest(t, data, false)
	errAt := int64(-1)
	if strict.err != nil {
		var ie *schema.InputError
		if !errors.As(strict.err, &ie) || error(ie) != strict.err {
			t.Fatalf("error is not a *schema.InputError: %T %v", strict.err, strict.err)
		}
		m := inputErrRE.FindStringSubmatch(strict.err.Error())
		if m == nil {
			t.Fatalf("error does not read %q, an offset and a message: %q", fuzzName+"@", strict.err)
		}
		errAt, _ = strconv.ParseInt(m[1], 10, 64)
		if errAt != ie.Offset || errAt > int64(len(data)) {
			t.Fatalf("error at byte %d of %d: %v", errAt, len(data), strict.err)
		}
	}
	if n, ok := simpleEvents(data); ok {
		if strict.err != nil || strict.events != n {
			t.Fatalf("plain JSON of %d simple events: %d events, error %v", n, strict.events, strict.err)
		}
	}

	lenient := runIngest(t, data, true)
	if lenient.err != nil {
		t.Fatalf("SkipBad: error %v", lenient.err)
	}
	if strict.err == nil {
		if lenient.events != strict.events || len(lenient.errors) != 0 {
			t.Fatalf("SkipBad: %d events and %d bad ones, without it %d and none", lenient.events, len(lenient.errors), strict.events)
		}
		return
	}
	if lenient.overflow {
		return
	}
	if len(lenient.errors) == 0 || lenient.errors[0] != strict.err.(*schema.InputError).Msg || lenient.errorAt[0] != errAt {
		t.Fatalf("SkipBad: first bad event %v at %v, without SkipBad %v", lenient.errors, lenient.errorAt, strict.err)
	}
	if before := lenient.eventsBefore(errAt); before != strict.events {
		t.Fatalf("SkipBad: %d events before byte %d, without SkipBad %d", before, errAt, strict.events)
	}
}

// simpleEvents: when data is valid JSON, an array (or {"traceEvents": ...})
// of objects with only ph (a one-letter string), ts (an integer of at most
// 12 digits), name (a string), pid and tid (integers), every one must be
// read, metadata excepted.
func simpleEvents(data []byte) (int64, bool) {
	if !json.Valid(data) {
		return 0, false
	}
	var top any
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if dec.Decode(&top) != nil {
		return 0, false
	}
	var evs []any
	switch v := top.(type) {
	case []any:
		evs = v
	case map[string]any:
		if len(v) != 1 {
			return 0, false
		}
		a, ok := v["traceEvents"].([]any)
		if !ok {
			return 0, false
		}
		evs = a
	default:
		return 0, false
	}
	var n int64
	for _, e := range evs {
		ev, ok := e.(map[string]any)
		if !ok || len(ev) == 0 {
			return 0, false
		}
		ph, ok := ev["ph"].(string)
		if !ok || len(ph) != 1 {
			return 0, false
		}
		for k, v := range ev {
			switch k {
			case "ph":
			case "ts", "pid", "tid":
				num, ok := v.(json.Number)
				if _, err := strconv.ParseInt(string(num), 10, 64); !ok || err != nil || len(num) > 12 {
					return 0, false
				}
			case "name":
				if _, ok := v.(string); !ok {
					return 0, false
				}
			default:
				return 0, false
			}
		}
		if _, ok := ev["ts"]; !ok && ph != "M" {
			return 0, false
		}
		if ph != "M" {
			n++
		}
	}
	return n, true
}

type ingestOutcome struct {
	err      error
	events   int64
	srcLines []int64 // src_line of every event
	errors   []string
	errorAt  []int64
	overflow bool
}

func (o ingestOutcome) eventsBefore(off int64) int64 {
	var n int64
	for _, l := range o.srcLines {
		if l < off {
			n++
		}
	}
	return n
}

func runIngest(t *testing.T, data []byte, skipBad bool) ingestOutcome {
	sink := &checkSink{}
	out := ingestOutcome{}
	out.events, out.err = dbtest.FuzzIngest(t, chrome.Ingester{}, fuzzName, data, skipBad, sink)
	if out.err != nil {
		return out
	}
	out.srcLines, out.errors, out.errorAt, out.overflow = sink.srcLines, sink.errors, sink.errorAt, sink.overflow
	return out
}

// checkSink checks the batches a run writer sends and keeps a few figures.
type checkSink struct {
	batches  dbtest.BatchChecker
	err      error
	events   int64
	srcLines []int64
	errors   []string
	errorAt  []int64
	overflow bool
}

// Result is what dbtest.FuzzIngest checks.
func (s *checkSink) Result() (int64, error) { return s.events, s.err }

func (s *checkSink) Put(table string, rec arrow.Record) error {
	if s.err == nil {
		s.err = s.check(table, rec)
	}
	return nil
}

func (s *checkSink) check(table string, rec arrow.Record) error {
	if err := s.batches.Check(table, rec); err != nil {
		return err
	}
	n := int(rec.NumRows())
	switch table {
	case schema.TableEvents:
		s.events += rec.NumRows()
		lines := rec.Column(14).(*array.Int64)
		for i := 0; i < n; i++ {
			s.srcLines = append(s.srcLines, lines.Value(i))
		}
	case schema.TableStateIntervals:
		// CheckBatch checked the times; the instance is a nesting depth.
		inst := rec.Column(2).(*array.Int64)
		for i := 0; i < n; i++ {
			if inst.Value(i) < 0 {
				return fmt.Errorf("interval with instance %d", inst.Value(i))
			}
		}
	case schema.TableDiagnostics:
		line, sev, msg := rec.Column(1).(*array.Int64), rec.Column(3), rec.Column(4).(*array.String)
		sevs := sev.(*array.Dictionary)
		dict := sevs.Dictionary().(*array.String)
		for i := 0; i < n; i++ {
			switch {
			case dict.Value(sevs.GetValueIndex(i)) == "error":
				s.errors = append(s.errors, msg.Value(i))
				s.errorAt = append(s.errorAt, line.Value(i))
			case bytes.HasPrefix([]byte(msg.Value(i)), []byte("more than ")):
				s.overflow = true
			}
		}
	}
	return nil
}
