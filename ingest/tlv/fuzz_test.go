package tlv

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/traceduck/traceduck/ingest"
	"github.com/traceduck/traceduck/internal/dbtest"
	"github.com/traceduck/traceduck/internal/tracegen"
	"github.com/traceduck/traceduck/schema"
)

// FuzzStdFormat: any line either is refused with a syntax error, or
// parses into a line that prints and parses back to itself; read by a
// Reader (fig. 3's resources), it never panics.
func FuzzStdFormat(f *testing.F) {
	for _, s := range []string{
		"[2403010]MAIN_TASK.leaveSVC(ena_tex,ercd=0)",
		"[4496099]MAIN_TASK.state=READY",
		"[4496802]TASK(state==RUNNING).state=READY",
		"[1f3a]TASK(pri<5 & !(id==2) | state==READY).start()",
		"[1.5]TASK1.f(a(b,c), d)",
		"[12]T((s==1).s=1",
		"[4496802]TASK(state==RUNNING ).state= READY ",
		"[1]Task(id==2).prcId = 2",
		" [1] T1 . f ( a, b ) ",
	} {
		f.Add(s)
	}
	useLoader(f)
	s, err := LoadSetup(filepath.Join("testdata", "fig3", "fig3.res"), nil, []string{filepath.Join("testdata", "common.resh")}, nil)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, line string) {
		l, err := ParseStdLine(line)
		if err == nil {
			again, err := ParseStdLine(l.String())
			if err != nil {
				t.Fatalf("%q prints as %q, which does not parse: %v", line, l.String(), err)
			}
			canon := l.Canonical(line)
			same, err := ParseStdLine(canon)
			if err != nil {
				t.Fatalf("%q is %q as TLV writes it, which does not parse: %v", line, canon, err)
			}
			if again := same.Canonical(canon); again != canon {
				t.Fatalf("%q is %q as TLV writes it, and that is %q", line, canon, again)
			}
			l.Cond, again.Cond, same.Cond = nil, nil, nil
			if !reflect.DeepEqual(l, same) {
				t.Fatalf("%q: %+v\nas TLV writes it %q: %+v", line, l, canon, same)
			}
			again.ArgsText = l.ArgsText // String writes the arguments its way
			if !reflect.DeepEqual(l, again) {
				t.Fatalf("%q: %+v\nprinted %q: %+v", line, l, l.String(), again)
			}
		} else if _, ok := err.(*SyntaxError); !ok {
			t.Fatalf("%q: error %T %v", line, err, err)
		}
		c := &collect{skip: true}
		rd, err := NewReader(s, c, c)
		if err != nil {
			t.Fatal(err)
		}
		if err := rd.Line(line, 1, -1); err != nil {
			t.Fatal(err)
		}
	})
}

// FuzzConvert: fixed rules (fig. 8's and the conditional ones of
// testdata/fuzzrules) over arbitrary log bytes never panic, never stop with an
// error (bad lines are skipped) but that no rule matches any line, and every
// line they produce is in the standard format.
func FuzzConvert(f *testing.F) {
	dbtest.AddSeeds(f, 0, "testdata/fig8/fig8.log", "testdata/fuzzrules/fuzzrules.log")
	f.Add([]byte("[0] unknown trace log type: 0.\n\n\r\n[x] dispatch to task 1.\n[99999999999999999999999] dispatch to task 1.\n"))
	useLoader(f)
	s, err := LoadSetup(filepath.Join("testdata", "fuzzrules", "fuzzrules.res"), []string{filepath.Join("testdata", "fuzzrules")}, []string{filepath.Join("testdata", "common.resh")}, nil)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, log []byte) {
		// Conditions known by their values (condCache) or read from their
		// text, rules that begin alike matched once per rest (lineMemo) or
		// one by one: the same.
		var runs [2]*collect
		for i := range runs {
			c := &collect{skip: true}
			rd, err := NewReader(s, c, c)
			if err != nil {
				t.Fatal(err)
			}
			rd.Conv.noKnown, rd.Conv.noLineMemo = i == 1, i == 1
			src := ingest.NewSource("fuzz.log", bytes.NewReader(log), int64(len(log)))
			if err := rd.ReadAll(context.Background(), src, "fuzz.log", false); err != nil {
				// The one error: no rule matched a line (then none produced one).
				var ie *schema.InputError
				if !errors.As(err, &ie) || len(c.lines) > 0 || !strings.HasPrefix(ie.Msg, "expected a line that a conversion rule of set fuzzrules matches, found none in ") {
					t.Fatal(err)
				}
			}
			rd.Finish()
			runs[i] = c
		}
		c := runs[0]
		for _, l := range c.lines {
			if _, err := ParseStdLine(l); err != nil {
				t.Fatalf("produced %q: %v", l, err)
			}
		}
		if !slices.Equal(c.lines, runs[1].lines) || !slices.Equal(c.msgs, runs[1].msgs) || !slices.Equal(c.bad, runs[1].bad) {
			t.Fatalf("conditions known by their values: %q %q %q, read from their text: %q %q %q", c.lines, c.msgs, c.bad, runs[1].lines, runs[1].msgs, runs[1].bad)
		}
	})
}

// FuzzConvertTOPPERS: TOPPERS/ASP and FMP lines through the bundled rules,
// with the rules that begin alike matched once per rest (lineMemo) and
// the conditions and macro arguments known by their values (condCache,
// refCache), and with all of them off: the same lines and notes.
func FuzzConvertTOPPERS(f *testing.F) {
	useLoader(f)
	var setups [2]*Setup
	for i, style := range []tracegen.TLVStyle{tracegen.TOPPERSASP, tracegen.TOPPERSFMP} {
		var log, res bytes.Buffer
		if _, err := tracegen.WriteTLV(&log, &res, tracegen.Config{Events: 60, Cores: 1 + i, Tasks: 4, Seed: 3}, style); err != nil {
			f.Fatal(err)
		}
		resPath := filepath.Join(f.TempDir(), "t.res")
		if err := os.WriteFile(resPath, res.Bytes(), 0o644); err != nil {
			f.Fatal(err)
		}
		s, err := LoadSetup(resPath, nil, nil, []string{[]string{"asp", "fmp"}[i]})
		if err != nil {
			f.Fatal(err)
		}
		setups[i] = s
		f.Add(i == 1, log.Bytes())
	}
	f.Add(false, []byte("[10] dispatch to task 1.\n[11] task 2 becomes RUNNABLE.\n[12] enter to wai_sem semid=1.\n[13] leave from wai_sem ercd=0.\n[14] enter to int handler 3.\n"))
	f.Add(true, []byte("[10]:[1]: dispatch to task 1.\n[9]:[2]: task 2 becomes WAITING.\n[12]:[1:3]: enter to iact_tsk tskid=2.\n[13]:[2]: task 1 migrates from processor 1 to processor 2.\n"))
	f.Fuzz(func(t *testing.T, fmp bool, log []byte) {
		s := setups[0]
		if fmp {
			s = setups[1]
		}
		var runs [2]*collect
		for i := range runs {
			c := &collect{skip: true}
			rd, err := NewReader(s, c, c)
			if err != nil {
				t.Fatal(err)
			}
			rd.Conv.noKnown, rd.Conv.noLineMemo = i == 1, i == 1
			src := ingest.NewSource("fuzz.log", bytes.NewReader(log), int64(len(log)))
			err = rd.ReadAll(context.Background(), src, "fuzz.log", fmp)
			var ie *schema.InputError
			if err != nil && (!errors.As(err, &ie) || !strings.HasPrefix(ie.Msg, "expected a line that a conversion rule of set ")) {
				t.Fatal(err)
			}
			rd.Finish()
			runs[i] = c
		}
		a, b := runs[0], runs[1]
		if !slices.Equal(a.lines, b.lines) || !slices.Equal(a.msgs, b.msgs) || !slices.Equal(a.bad, b.bad) || !reflect.DeepEqual(a.notes, b.notes) {
			t.Fatalf("with the memos: %q %q %q, without: %q %q %q", a.lines, a.msgs, a.bad, b.lines, b.msgs, b.bad)
		}
	})
}
