package schema

import (
	"context"
	"strings"
	"testing"
)

// TestSetClocks: clocks are stored, read back per system and replaced by a
// second call in one transaction; a missing run, a drift past ±1000 ppm or
// a run twice stores nothing.
func TestSetClocks(t *testing.T) {
	db, _ := openTest(t)
	ctx := context.Background()
	for _, name := range []string{"a", "b"} {
		if _, err := db.Ingest(ctx, RunInfo{Name: name, Source: name, Format: "test", SHA256: name, Tags: [][2]string{{"system", "s"}}}, IngestOptions{}, fillSmall(3)); err != nil {
			t.Fatal(err)
		}
	}
	lo, hi, dlo := int64(-10), int64(30), -1.5
	first := []Clock{{RunID: 1, Source: ClockReference}, {RunID: 2, OffsetNS: 10, DriftPPM: 2.5, RefTS: 100, OffsetLo: &lo, OffsetHi: &hi, DriftLo: &dlo, Source: ClockMessages, Sent: 3, Note: "x"}}
	if err := db.SetClocks(ctx, first); err != nil {
		t.Fatal(err)
	}
	got, err := db.Clocks(ctx, "s")
	if err != nil || len(got) != 2 || got[1].OffsetNS != 10 || *got[1].OffsetLo != -10 || *got[1].OffsetHi != 30 || *got[1].DriftLo != -1.5 || got[1].DriftHi != nil ||
		got[1].Note != "x" || got[1].Sent != 3 || got[0].OffsetLo != nil || got[0].Source != ClockReference {
		t.Fatalf("%v: %+v", err, got)
	}
	if err := db.SetClocks(ctx, []Clock{{RunID: 2, OffsetNS: -5, Source: ClockUser}}); err != nil {
		t.Fatal(err)
	}
	if got, _ := db.Clocks(ctx, "s"); len(got) != 2 || got[1].OffsetNS != -5 || got[1].OffsetLo != nil || got[1].Source != ClockUser {
		t.Fatalf("replaced: %+v", got)
	}
	for _, bad := range []struct {
		c    []Clock
		want string
	}{
		{[]Clock{{RunID: 1, OffsetNS: 99}, {RunID: 3}}, "no run 3"},
		{[]Clock{{RunID: 1, OffsetNS: 99}, {RunID: 2, DriftPPM: 1000.5}}, "drift of 1000.5 ppm"},
		{[]Clock{{RunID: 1, OffsetNS: 99}, {RunID: 1}}, "run 1 twice"},
	} {
		if err := db.SetClocks(ctx, bad.c); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("%+v: %v, want %s", bad.c, err, bad.want)
		}
	}
	if got, _ := db.Clocks(ctx, "s"); got[0].OffsetNS != 0 || got[1].OffsetNS != -5 {
		t.Errorf("a refused call changed the clocks: %+v", got)
	}
	c := Clock{OffsetNS: 10, DriftPPM: 50, RefTS: 1000}
	if c.Aligned(1000) != 1010 || c.Aligned(21000) != 21011 || c.Aligned(-9000) != -8990-1 {
		t.Errorf("Aligned: %d %d %d", c.Aligned(1000), c.Aligned(21000), c.Aligned(-9000))
	}
}
