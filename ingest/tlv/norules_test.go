package tlv_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/traceduck/traceduck/ingest"
	"github.com/traceduck/traceduck/internal/dbtest"
)

// TestEmptyConvertRulesMeansStandardFormat: a resource file that says
// ConvertRules: [""] marks a log already in the standard format; rules
// named with --rules must not be applied to it.
func TestEmptyConvertRulesMeansStandardFormat(t *testing.T) {
	dir := "../../../shared/testdata-external/toppers"
	log := filepath.Join(dir, "YixiaoLi__tlv4mc__sampleFiles__SampleLog__asp__asp_short_standard_format.log")
	res := filepath.Join(dir, "YixiaoLi__tlv4mc__sampleFiles__SampleLog__asp__asp_short_standard_format.res")
	rules := filepath.Join(dir, "YixiaoLi__tlv4mc__convertRules__asp.cnv")
	if _, err := os.Stat(log); err != nil {
		t.Skip("no ../shared/testdata-external/toppers")
	}
	db := dbtest.Open(t)
	res1 := dbtest.Ingest(t, db, log, ingest.Options{Format: "tlv", Params: map[string]string{"resources": res}})
	res2 := dbtest.Ingest(t, db, log, ingest.Options{Format: "tlv", Force: true, Params: map[string]string{"resources": res, "rules": rules}})
	if res1.Events != 3087 || res2.Events != res1.Events {
		t.Fatalf("events: %d without --rules, %d with (want 3087 both)", res1.Events, res2.Events)
	}
}
