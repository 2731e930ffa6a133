package btf_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/traceduck/traceduck/ingest"
	"github.com/traceduck/traceduck/ingest/btf"
	"github.com/traceduck/traceduck/internal/dbtest"
	"github.com/traceduck/traceduck/schema"
)

// fuzzSeeds are hand-made inputs at the edges of the BTF syntax.
var fuzzSeeds = []string{
	// CR-only, CRLF and mixed line ends; no newline at the end.
	"#timeScale ns\r0,Core_0,0,C,Core_0,0,set_frequency,1\r1,Stim,0,T,A,0,activate\r2,Core_0,0,T,A,0,start\r",
	"#version 2.2.0\r\n#timeScale us\r\n0,S,0,T,A,0,activate\r\n5,Core_0,0,T,A,0,start\r\n9,Core_0,0,T,A,0,terminate",
	"0,S,0,T,A,0,activate\r\r\n\r\n1,Core_1,0,T,A,0,start\n\r\n\r2,Core_1,0,T,A,0,preempt",
	// Notes with commas, spaces, quotes, an empty note, a note of spaces.
	"5,T1,0,SIG,S,0,write,1,2,3\n6,T1,0,SIG,S,0,write,\n7,T1,0,SIG,S,0,write,   \n8,T1,0,EVENT,E,0,set_event,\"x\\y\",z\n",
	// BTF 1.x entity tables resolving ids; a table ended by a blank line
	// and by a data line; "#-" outside a table.
	"#entityType\n#-0 T\n#-1 C\n#entityTable\n#-0 Task_A\n#-1 Core_0\n#entityTypeTable\n#-0 T\n\n#-5 stray\n0,1,0,0,0,0,activate\n1,1,0,0,0,0,start\n#-2 late\n2,1,0,1,1,0,set_frequency,5\n",
	"#entityTable\n#-0\n",
	"#entityType\n#-x\ty\n0,a,0,x,b,0,c\n",
	// Time scales and huge or overflowing timestamps.
	"#timeScale ps\n18446744073709551615,a,0,T,b,0,activate\n",
	"#timeScale ps\n1,a,0,T,b,0,activate\n999,a,0,T,b,0,activate\n",
	"#timeScale s\n9223372036,a,0,T,b,0,activate\n9223372037,a,0,T,b,0,activate\n",
	"#timeScale ms\n9223372036854,a,0,T,b,0,activate\n",
	"9223372036854775807,a,0,T,b,0,activate\n9223372036854775808,a,0,T,b,0,activate\n",
	"18446744073709551616,a,0,T,b,0,activate\n",
	"#timeScale PS\n#timeScale weeks\n",
	"#timeScale\n1,a,0,T,b,0,activate\n",
	// Empty and odd fields.
	"0,,0,T,b,0,start\n",
	"0,a,,T,b,,start\n0,a, ,T,b, ,start\n",
	"0,a,0,,b,0,x\n",
	"0,a,0,T,,0,x\n",
	"0,a,0,T,b,0,\n",
	"0,a,0,T,b,0,start,\n",
	"0,a,0,T,b,0\n",
	",,,,,,\n",
	"0,a,-5,T,b,+3,activate\n0,a,-,T,b,0,activate\n",
	"0,a,--5,T,b,0,activate\n",
	"-1,a,0,T,b,0,activate\n",
	"0x10,a,0,T,b,0,activate\n",
	" \t 1 \t, a ,\t0 , T , b , 0 , activate , note \t\n",
	// NUL bytes and invalid UTF-8.
	"0,a\x00b,0,T,c,0,activate\n\x00\n",
	"0,a,0,T,b,0,activate,\xff\xfe\x00\n1,\xc3,0,\xff,\xfe,0,\xfd\n",
	// Blank and comment lines only.
	"",
	"\n\n \t \n#\n# comment\n#-1 x\n#version\n",
	"#\r#x y\r\r",
	// A whole process lifecycle, then a second instance, backwards time,
	// unknown actions and types, a type clash.
	"0,Core_0,0,C,Core_0,0,set_frequency,100\n" +
		"1,Stim,0,T,A,0,activate\n2,Core_0,0,T,A,0,start\n3,Core_0,0,T,A,0,poll\n4,Core_0,0,T,A,0,run\n" +
		"5,Core_0,0,T,A,0,poll\n6,Core_0,0,T,A,0,park\n7,Core_0,0,T,A,0,poll_parking\n8,Core_0,0,T,A,0,park\n" +
		"9,Core_0,0,T,A,0,release_parking\n10,Core_0,0,T,A,0,resume\n11,Core_0,0,T,A,0,wait\n" +
		"12,Core_0,0,T,A,0,release\n13,Core_0,0,T,A,0,resume\n14,Core_0,0,T,A,0,terminate\n" +
		"3,Stim,1,T,A,1,activate\n15,Core_1,0,T,A,1,resume\n16,Core_0,0,T,A,1,preempt\n" +
		"17,A,1,T,A,1,fullmigration\n18,Core_0,0,T,A,1,schedulepoint\n19,x,0,FOO,A,0,bar\n20,x,0,SEM,A,0,lock\n",
	// Semaphores, runnables, signals, events, stimuli, system.
	"0,SEM_A,0,SEM,SEM_A,0,ready\n1,SEM_A,0,SEM,SEM_A,0,lock\n2,SEM_A,0,SEM,SEM_A,0,overfull\n" +
		"3,SEM_A,0,SEM,SEM_A,0,full\n4,SEM_A,0,SEM,SEM_A,0,unlock_full\n5,SEM_A,0,SEM,SEM_A,0,freed\n" +
		"6,SEM_A,0,SEM,SEM_A,0,used\n7,SEM_A,0,SEM,SEM_A,0,lock_used\n8,SEM_A,0,SEM,SEM_A,0,unlock\n" +
		"9,T,0,SEM,SEM_A,0,requestsemaphore\n10,T,0,R,R1,0,start\n11,T,0,R,R1,0,suspend\n12,T,0,R,R1,0,resume\n" +
		"13,T,0,R,R1,0,terminate\n14,T,0,SIG,S,0,write\n15,T,0,SIG,S,0,read,1\n16,SIM,0,SIM,SIM,0,error,boom\n" +
		"17,SIM,0,SYS,SIM,0,tag,k\n18,SIM,0,SIM,SIM,0,finalize\n19,SIM,0,STI,X,0,trigger\n20,Core_0,0,C,Core_0,0,set_frequence,abc\n" +
		"21,P,0,P,P,0,x\n22,E,0,ECU,E,0,x\n23,M,0,M,M,0,x\n24,IB,0,IB,IB,0,x\n25,S,0,SCHED,S,0,x\n26,C,0,Core,CORE,0,SET_FREQUENCY,1\n",
	// Holds and waits: the example, a release before any
	// assignment, a repeated release, a counting semaphore, an action by
	// the semaphore itself, backwards time.
	"100,T1,0,SEM,Sem1,0,requestsemaphore\n100,T1,0,SEM,Sem1,0,assigned\n150,T2,0,SEM,Sem1,0,requestsemaphore\n" +
		"150,T2,0,SEM,Sem1,0,waiting\n400,T1,0,SEM,Sem1,0,released\n400,T2,0,SEM,Sem1,0,assigned\n600,T2,0,SEM,Sem1,0,released\n" +
		"610,T3,1,SEM,Sem2,0,released\n620,T3,1,SEM,Sem2,0,released\n630,T1,0,SEM,Sem2,0,exclusivesemaphore\n630,T1,0,SEM,Sem2,0,assigned\n" +
		"640,T2,0,SEM,Sem2,0,assigned\n650,Sem2,0,SEM,Sem2,0,waiting\n500,T1,0,SEM,Sem2,0,released\n660,T4,0,SEM,Sem1,0,waiting\n",
}

// FuzzIngest feeds arbitrary bytes to the BTF ingester, without DuckDB:
// the RunWriter's batches go to a sink that checks and drops them. Each
// input is ingested twice, stopping at the first bad line and with
// SkipBad, and the two must agree with each other and with a count of the
// data lines made independently of the ingester; then line by line and in
// chunks of 1 to 5 bytes (chunks.go), which must give the same batches.
func FuzzIngest(f *testing.F) {
	dbtest.AddSeeds(f, 0, "testdata/*.btf")
	dbtest.AddSeeds(f, 16<<10, filepath.Join(externalDir, "*.btf"))
	for _, s := range fuzzSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		checkIngest(t, data)
		// The chunked reader in chunks that cut the input everywhere
		// gives what the line-by-line reader gives.
		sameBatches(t, "fuzz input", data, len(data)%2 == 0, 3+len(data)%14, 1+len(data)%5)
	})
}

const fuzzName = "fuzz.btf"

var inputErrRE = regexp.MustCompile(`^` + regexp.QuoteMeta(fuzzName) + `:([0-9]+): \S`)

func checkIngest(t *testing.T, data []byte) {
	lines := splitLines(data)
	isData := make([]bool, len(lines))
	nData := 0
	for i, l := range lines {
		l = bytes.Trim(l, " \t")
		isData[i] = len(l) > 0 && l[0] != '#'
		if isData[i] {
			nData++
		}
	}

	// Stop at the first bad line.
	strict := runIngest(t, data, false)
	errLine := int64(0)
	if strict.err != nil {
		var ie *schema.InputError
		if !errors.As(strict.err, &ie) || error(ie) != strict.err {
			t.Fatalf("error is not a *schema.InputError: %T %v", strict.err, strict.err)
		}
		m := inputErrRE.FindStringSubmatch(strict.err.Error())
		if m == nil {
			t.Fatalf("error does not start with %q, a line number and a message: %q", fuzzName+":", strict.err)
		}
		errLine, _ = strconv.ParseInt(m[1], 10, 64)
		if errLine != ie.Line || errLine < 1 || errLine > int64(len(lines)) {
			t.Fatalf("error at line %d (field %d) of an input of %d lines: %v", errLine, ie.Line, len(lines), strict.err)
		}
		if len(bytes.Trim(lines[errLine-1], " \t")) == 0 {
			t.Fatalf("error at blank line %d: %v", errLine, strict.err)
		}
		before := 0
		for i := 0; i < int(errLine-1); i++ {
			if isData[i] {
				before++
			}
		}
		if strict.events != int64(before) {
			t.Fatalf("error at line %d after %d events, but %d data lines come before it: %v", errLine, strict.events, before, strict.err)
		}
	} else if strict.events != int64(nData) {
		t.Fatalf("%d events from %d data lines", strict.events, nData)
	}

	// Skip bad lines: never an error; the events are the data lines that
	// are not reported as bad, and the first bad line is the one the
	// strict ingest stopped at.
	lenient := runIngest(t, data, true)
	if lenient.err != nil {
		t.Fatalf("SkipBad: error %v", lenient.err)
	}
	if lenient.overflow {
		return // too many diagnostics to account for each
	}
	badData := 0
	first := int64(0)
	for line := range lenient.badLines {
		if line < 1 || line > int64(len(lines)) {
			t.Fatalf("SkipBad: bad line %d of an input of %d lines", line, len(lines))
		}
		if isData[line-1] {
			badData++
		}
		if first == 0 || line < first {
			first = line
		}
	}
	if lenient.events != int64(nData-badData) {
		t.Fatalf("SkipBad: %d events from %d data lines of which %d reported bad", lenient.events, nData, badData)
	}
	if first != errLine {
		t.Fatalf("SkipBad: first bad line %d, but the strict ingest stopped at line %d (%v)", first, errLine, strict.err)
	}
}

type ingestOutcome struct {
	err      error
	events   int64
	badLines map[int64]bool // src_line of diagnostics of severity error
	overflow bool
}

func runIngest(t *testing.T, data []byte, skipBad bool) ingestOutcome {
	sink := &checkSink{t: t, badLines: map[int64]bool{}}
	out := ingestOutcome{}
	out.events, out.err = dbtest.FuzzIngest(t, btf.Ingester{}, fuzzName, data, skipBad, sink)
	if out.err != nil {
		return out
	}
	out.badLines, out.overflow = sink.badLines, sink.overflow
	return out
}

// checkSink checks the batches a run writer sends and keeps a few figures.
// It runs on the writer's pipeline goroutine; the figures are read after
// Finish, which waits for it.
type checkSink struct {
	batches  dbtest.BatchChecker
	t        *testing.T
	err      error
	events   int64
	badLines map[int64]bool
	overflow bool
}

// Result is what dbtest.FuzzIngest checks.
func (s *checkSink) Result() (int64, error) { return s.events, s.err }

func (s *checkSink) Put(table string, rec arrow.Record) error {
	if s.err != nil {
		return nil
	}
	s.err = s.check(table, rec)
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
	case schema.TableDiagnostics:
		line := rec.Column(1).(*array.Int64)
		sev := rec.Column(3).(*array.Dictionary)
		sevVals := sev.Dictionary().(*array.String)
		msg := rec.Column(4).(*array.String)
		for i := 0; i < n; i++ {
			switch sevVals.Value(sev.GetValueIndex(i)) {
			case string(schema.Error):
				if line.IsNull(i) {
					return fmt.Errorf("error diagnostic without a line: %s", msg.Value(i))
				}
				if s.badLines[line.Value(i)] {
					return fmt.Errorf("two error diagnostics for line %d", line.Value(i))
				}
				s.badLines[line.Value(i)] = true
			case string(schema.Warning):
				if line.IsNull(i) && bytes.HasPrefix([]byte(msg.Value(i)), []byte("more than")) {
					s.overflow = true
				}
			}
		}
	}
	return nil
}

// splitLines splits like a BTF reader must: LF, CRLF or a lone CR end a
// line; the last line may have no end.
func splitLines(b []byte) [][]byte {
	var lines [][]byte
	for len(b) > 0 {
		i := bytes.IndexAny(b, "\r\n")
		if i < 0 {
			lines = append(lines, b)
			break
		}
		lines = append(lines, b[:i])
		if b[i] == '\r' && i+1 < len(b) && b[i+1] == '\n' {
			b = b[i+2:]
		} else {
			b = b[i+1:]
		}
	}
	return lines
}

// TestFuzzSeedsLoad loads the fuzz seeds that parse without error into
// DuckDB: what the ingester accepts, the database must accept too (NUL
// bytes included).
func TestFuzzSeedsLoad(t *testing.T) {
	db := dbtest.Open(t)
	for i, s := range fuzzSeeds {
		t.Run(fmt.Sprintf("seed%d", i), func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			probe := schema.NewRunWriter(schema.RunInfo{Source: fuzzName}, dbtest.Discard{}, mem)
			src := ingest.NewSource(fuzzName, bytes.NewReader([]byte(s)), int64(len(s)))
			err := btf.Ingester{}.Ingest(context.Background(), src, probe)
			probe.Abort()
			if err != nil {
				return // a syntax error: FuzzIngest checks those
			}
			name := fmt.Sprintf("seed%d.btf", i)
			src = ingest.NewSource(name, bytes.NewReader([]byte(s)), int64(len(s)))
			res, err := ingest.Opened(context.Background(), db, src, ingest.Options{Format: "btf", Force: true})
			if err != nil {
				t.Fatalf("%q parses, but loading fails: %v", s, err)
			}
			if want := int64(len(nonBlankData(s))); res.Events != want {
				t.Errorf("%q: %d events, want %d", s, res.Events, want)
			}
		})
	}
}

// TestInvalidUTF8 ingests lines with bytes that are not UTF-8 in each
// field. Either the line is refused as FILE:LINE (a syntax error) or it is
// loaded; a bare DuckDB error without a position is a bug.
func TestInvalidUTF8(t *testing.T) {
	db := dbtest.Open(t)
	for _, c := range []struct{ field, line string }{
		{"source", "0,a\xff,0,T,b,0,activate"},
		{"target type", "0,a,0,T\xff,b,0,activate"},
		{"target", "0,a,0,T,b\xff,0,activate"},
		{"action", "0,a,0,T,b,0,activate\xff"},
		{"note", "0,a,0,T,b,0,activate,\xff"},
		{"set_event note", "0,a,0,EVENT,b,0,set_event,\xc3"},
		{"header", "#creator \xff\n0,a,0,T,b,0,activate"},
	} {
		t.Run(c.field, func(t *testing.T) {
			data := "#version 2.2.0\n" + c.line + "\n"
			name := "utf8-" + strings.ReplaceAll(c.field, " ", "_") + ".btf"
			src := ingest.NewSource(name, strings.NewReader(data), int64(len(data)))
			res, err := ingest.Opened(context.Background(), db, src, ingest.Options{Format: "btf", Force: true})
			var ie *schema.InputError
			switch {
			case err == nil:
				if res.Events != 1 {
					t.Errorf("%d events, want 1", res.Events)
				}
				// The bytes were repaired, and the run says so.
				got := dbtest.Query(t, db.SQL(), "SELECT src_line, severity, count FROM diagnostics WHERE run_id = ? AND message LIKE 'text that is not UTF-8%'", res.RunID)
				if want := "2 | warning | "; !strings.HasPrefix(got, want) && c.field != "header" {
					t.Errorf("diagnostics %q, want %q...", got, want)
				} else if c.field == "header" && !strings.HasPrefix(got, "NULL | warning | 1") {
					t.Errorf("diagnostics %q, want NULL | warning | 1", got)
				}
				if n := dbtest.Query(t, db.SQL(), "SELECT count(*) FROM events e JOIN objects o ON o.run_id = e.run_id AND o.object_id = e.object_id JOIN objects c ON c.run_id = e.run_id AND c.object_id = e.context_id WHERE e.run_id = ? AND (c.name || o.name || e.class || e.event || coalesce(e.value, '')) LIKE '%\uFFFD%'", res.RunID); n != "1\n" && c.field != "header" {
					t.Errorf("no U+FFFD in the event's text: %s", n)
				}
			case errors.As(err, &ie):
				if !strings.HasPrefix(err.Error(), name+":2: ") {
					t.Errorf("error %q does not name %s:2", err, name)
				}
			default:
				t.Errorf("error without a position: %v", err)
			}
		})
	}
}

func nonBlankData(s string) [][]byte {
	var out [][]byte
	for _, l := range splitLines([]byte(s)) {
		l = bytes.Trim(l, " \t")
		if len(l) > 0 && l[0] != '#' {
			out = append(out, l)
		}
	}
	return out
}
