package btf_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/traceduck/traceduck/ingest"
	"github.com/traceduck/traceduck/internal/dbtest"
	"github.com/traceduck/traceduck/schema"
)

const goodHead = "#version 2.2.0\n#timeScale ns\n0,Core_0,0,C,Core_0,0,set_frequency,1\n"

func TestBadInputMessages(t *testing.T) {
	for _, tc := range []struct{ line, want string }{
		{"12x,Core_0,0,T,A,0,start", `bad.btf:4: time: expected a non-negative integer, found "12x"`},
		{"-5,Core_0,0,T,A,0,start", `bad.btf:4: time: expected a non-negative integer, found "-5"`},
		{",Core_0,0,T,A,0,start", `bad.btf:4: time: expected a non-negative integer, found ""`},
		{"99999999999999999999,Core_0,0,T,A,0,start", `bad.btf:4: time: expected a non-negative integer, found "99999999999999999999"`},
		{"10,Core_0,0,T,A,0", `bad.btf:4: expected 7 or 8 comma-separated fields (time,source,sourceInstance,targetType,target,targetInstance,action[,note]), found 6`},
		{"10", `bad.btf:4: expected 7 or 8 comma-separated fields (time,source,sourceInstance,targetType,target,targetInstance,action[,note]), found 1`},
		{"10, ,0,T,A,0,start", `bad.btf:4: source: expected an entity name, found nothing`},
		{"10,Core_0,zero,T,A,0,start", `bad.btf:4: source instance: expected an integer, found "zero"`},
		{"10,Core_0,0,,A,0,start", `bad.btf:4: target type: expected an entity type (T, I, R, SEM, ...), found nothing`},
		{"10,Core_0,0,T,,0,start", `bad.btf:4: target: expected an entity name, found nothing`},
		{"10,Core_0,0,T,A,1.5,start", `bad.btf:4: target instance: expected an integer, found "1.5"`},
		{"10,Core_0,0,T,A,0,", `bad.btf:4: action: expected an action, found nothing`},
		{"#timeScale fortnights", `bad.btf:4: #timeScale: expected ps, ns, us, ms or s, found "fortnights"`},
	} {
		t.Run(tc.want, func(t *testing.T) {
			db := dbtest.Open(t)
			dir := t.TempDir()
			good := filepath.Join(dir, "good.btf")
			bad := filepath.Join(dir, "bad.btf")
			os.WriteFile(good, []byte(goodHead+"5,Core_0,0,T,A,0,start\n"), 0o644)
			os.WriteFile(bad, []byte(goodHead+tc.line+"\n1,Core_0,0,T,A,0,terminate\n"), 0o644)
			dbtest.Ingest(t, db, good, ingest.Options{})
			before := dbtest.Dump(t, db.SQL())
			_, err := ingest.Path(context.Background(), db, bad, ingest.Options{})
			var ie *schema.InputError
			if !errors.As(err, &ie) {
				t.Fatalf("got %v, want an InputError", err)
			}
			if got := filepath.Base(ie.File) + ":" + err.Error()[len(ie.File)+1:]; got != tc.want {
				t.Errorf("got  %s\nwant %s", got, tc.want)
			}
			if after := dbtest.Dump(t, db.SQL()); after != before {
				t.Errorf("database changed by a failed ingest:\n%s", after)
			}
		})
	}
}

func TestSkipBad(t *testing.T) {
	db := dbtest.Open(t)
	path := filepath.Join(t.TempDir(), "skip.btf")
	os.WriteFile(path, []byte(goodHead+"12x,Core_0,0,T,A,0,start\n20,Core_0,0,T,A,0,start\n30,Core_0,0,T,A,0\n40,Core_0,0,T,A,0,terminate\n"), 0o644)
	res := dbtest.Ingest(t, db, path, ingest.Options{SkipBad: true})
	if res.Events != 3 {
		t.Errorf("events %d, want 3", res.Events)
	}
	got := dbtest.Query(t, db.SQL(), "SELECT src_line, severity, message FROM diagnostics WHERE severity = 'error' ORDER BY src_line")
	want := `4 | error | time: expected a non-negative integer, found "12x"
6 | error | expected 7 or 8 comma-separated fields (time,source,sourceInstance,targetType,target,targetInstance,action[,note]), found 6
`
	if got != want {
		t.Errorf("diagnostics:\n%s\nwant\n%s", got, want)
	}
}

func TestLineTooLong(t *testing.T) {
	db := dbtest.Open(t)
	path := filepath.Join(t.TempDir(), "long.btf")
	long := make([]byte, ingest.MaxLineBytes+10)
	for i := range long {
		long[i] = 'x'
	}
	os.WriteFile(path, append([]byte(goodHead), long...), 0o644)
	_, err := ingest.Path(context.Background(), db, path, ingest.Options{})
	if err == nil || err.Error() != path+":4: expected a BTF line, found a line longer than 1048576 bytes" {
		t.Fatalf("got %v", err)
	}
}
