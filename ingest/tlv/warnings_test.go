package tlv_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/traceduck/traceduck/ingest"
	"github.com/traceduck/traceduck/internal/dbtest"
)

// TestConfigWarningsInDiagnostics: what the configuration files get wrong
// without stopping the ingest reaches diagnostics; µs (micro sign) is a
// time scale.
func TestConfigWarningsInDiagnostics(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	write("demo.resh", `{"demo": {"Job": {"Attributes": {"state": {"VariableType": "String", "AllocationType": "Dynamic"}}}}}`)
	res := write("demo.res", `{"TimeScale": "µs", "TimeRadix": 10, "ConvertRules": [""], "ResourceHeaders": ["demo"],
		"Resources": {"J1": {"Type": "Job", "Attributes": {"state": "IDLE", "colour": "red"}}}}`)
	log := write("demo.log", "[1]J1.state=BUSY\n[3]J1.state=IDLE\n[4]J1.state=BUSY\n")
	db := dbtest.Open(t)
	r := dbtest.Ingest(t, db, log, ingest.Options{Format: "tlv", Params: map[string]string{"resources": res, "headers": dir}})
	got := dbtest.Query(t, db.SQL(), "SELECT severity, message FROM diagnostics WHERE run_id = ?", r.RunID)
	if !strings.Contains(got, "warning | ") || !strings.Contains(got, "colour") {
		t.Errorf("diagnostics:\n%s", got)
	}
	if got := dbtest.Query(t, db.SQL(), "SELECT start_ts, end_ts FROM state_intervals WHERE run_id = ? AND state = 'state=BUSY' AND NOT truncated", r.RunID); got != "1000 | 3000\n" {
		t.Errorf("µs intervals: %s", got)
	}
}
