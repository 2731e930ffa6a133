package queries_test

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/traceduck/traceduck/internal/dbtest"
	"github.com/traceduck/traceduck/queries"
)

// TestOverheadSpecErrors: every mistake in a probe spec is reported as
// FILE:LINE: what was expected, what was found.
func TestOverheadSpecErrors(t *testing.T) {
	long := "probe a provider=syscall rate=1 context=" + strings.Repeat("x", 70<<10)
	for _, tc := range []struct{ spec, want string }{
		{"", "x.spec: expected a probe line, found none"},
		{"# only a comment\n", "x.spec: expected a probe line, found none"},
		{"prob a provider=syscall rate=1\n", `x.spec:1: expected session, probe, ecb or measured, found "prob"`},
		{"ecb action=count\n", "x.spec:1: expected a probe line before the first ecb, found ecb"},
		{"session\n", "x.spec:1: expected a session name after session, found nothing"},
		{"session refresh=2\n", `x.spec:1: expected a session name after session, found "refresh=2"`},
		{"session s\n", "x.spec:1: expected probe lines in session s, found none"},
		{"session s\nprobe a provider=fbt rate=1\nsession s\n", `x.spec:3: expected a new session name, found "s" again (first on line 1)`},
		{"session s refresh=fast\n", `x.spec:1: refresh: expected a number >= 0, found "fast"`},
		{"session s aggregations=maybe\n", `x.spec:1: aggregations: expected true or false, found "maybe"`},
		{"session s refresh=1 refresh=2\n", "x.spec:1: expected refresh= once, found it again"},
		{"probe\n", "x.spec:1: expected a probe name after probe, found nothing"},
		{"probe a rate=1\n", "x.spec:1: expected provider=NAME, found none"},
		{"probe a provider=syscall\n", "x.spec:1: expected rate=HZ, found none"},
		{"probe a provider=sys-call rate=1\n", `x.spec:1: provider: expected a provider name, found "sys-call"`},
		{"probe a provider=syscall rate=-1\n", `x.spec:1: rate: expected a number >= 0, found "-1"`},
		{"probe a provider=syscall rate=1 rte=2\n", `x.spec:1: expected one of context= cycles= provider= rate= rate_spread= spread=, found "rte=2"`},
		{"probe a provider=syscall rate=1 spread=5\n", "x.spec:1: expected cycles=N with spread=, found none (a probe's ECBs have the spreads of their items)"},
		{"probe a provider=syscall rate=1 cycles=5 spread=-5\n", `x.spec:1: spread: expected a number >= 0, found "-5"`},
		{"probe a provider=syscall rate=1 rate_spread=1%%\n", `x.spec:1: rate_spread: expected a number >= 0 (Hz) or a percentage (1%), found "1%%"`},
		{"probe a provider=syscall rate=1 rate_spread=x\n", `x.spec:1: rate_spread: expected a number >= 0 (Hz) or a percentage (1%), found "x"`},
		{"measured sys=1\n", "x.spec:1: expected a session line before measured, found measured"},
		{"session s\nmeasured\n", "x.spec:2: expected sys=PCT or usr=PCT (percent of one CPU), found none"},
		{"session s\nmeasured sys=1\nmeasured usr=2\n", "x.spec:3: expected one measured line in session s, found another (first on line 2)"},
		{"session s\nmeasured sys=one\n", `x.spec:2: sys: expected a number >= 0, found "one"`},
		{"session s\nmeasured total=1\n", `x.spec:2: expected one of sys= usr=, found "total=1"`},
		{"probe a provider=syscall rate=1 context=kernel\n", `x.spec:1: context: expected one of sys, usr, found "kernel"`},
		{"probe a provider=syscall rate=1\nprobe a provider=fbt rate=2\n", `x.spec:2: expected a new probe name in session x, found "a" again (first on line 1)`},
		{"probe a provider=syscall rate=1 cycles=100\necb action=count\n", "x.spec:2: expected no ecb lines for probe a, whose cycles= give the cost of a firing, found ecb"},
		{"probe a provider=syscall rate=1\necb pred=arg+cmp\n", "x.spec:2: expected prob=P (the predicate's probability of being true) with pred=, found none"},
		{"probe a provider=syscall rate=1\necb prob=0.5 action=count\n", "x.spec:2: expected pred=COMP with prob=, found none"},
		{"probe a provider=syscall rate=1\necb pred=arg prob=1.5\n", `x.spec:2: prob: expected a probability from 0 to 1, found "1.5"`},
		{"probe a provider=syscall rate=1\necb count=0\n", `x.spec:2: count: expected a whole number from 1 to 1000000, found "0"`},
		{"probe a provider=syscall rate=1\necb count=\n", "x.spec:2: count: expected a value, found an empty field"},
		{"probe a provider=syscall rate=1\necb pred=arg prob=\n", "x.spec:2: prob: expected a value, found an empty field"},
		{"probe a provider=syscall rate=1\necb action=count+\n", `x.spec:2: action: expected NAME[:COUNT][@CYCLES] items joined by +, found ""`},
		{"probe a provider=syscall rate=1\necb action=count:x\n", `x.spec:2: action: expected NAME[:COUNT][@CYCLES] items joined by +, found "count:x"`},
		{"probe a provider=syscall rate=1\n" + long + "\n", "x.spec:2: expected a line of at most 65536 bytes, found a longer one"},
	} {
		_, err := queries.ParseOverheadSpec("x.spec", strings.NewReader(tc.spec))
		if err == nil || err.Error() != tc.want {
			t.Errorf("%.60q:\n got %v\nwant %s", tc.spec, err, tc.want)
		}
	}
}

// TestOverheadSpecCheck: a spec naming an item or provider the parameters
// have no price for is refused before anything is computed.
func TestOverheadSpecCheck(t *testing.T) {
	p, err := queries.ReadOverheadParams("")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ spec, want string }{
		{"probe a provider=kprobe rate=1\n", `x.spec:1: provider: expected one of fbt, sdt, syscall, pid, usdt, profile, found "kprobe"`},
		{"probe a provider=fbt rate=1\necb action=cnt\n", `x.spec:2: action: expected an item of bundled overhead/items.tsv (or NAME@CYCLES), found "cnt"`},
		{"probe a provider=fbt rate=1\necb pred=scmp+ret prob=0.5\n", `x.spec:2: pred: expected scmp@CYCLES: the paper gives scmp no cost of its own, found "scmp"`},
	} {
		spec, err := queries.ParseOverheadSpec("x.spec", strings.NewReader(tc.spec))
		if err != nil {
			t.Fatal(err)
		}
		if err := spec.Check(p); err == nil || err.Error() != tc.want {
			t.Errorf("%q:\n got %v\nwant %s", tc.spec, err, tc.want)
		}
	}
	// A provider is not needed when the probe's cycles are given, and
	// @CYCLES prices what the paper leaves open.
	spec, err := queries.ParseOverheadSpec("x.spec", strings.NewReader(
		"probe a provider=kprobe rate=1 cycles=900\nprobe b provider=fbt rate=2\necb pred=scmp@300+ret prob=0.25 action=mystery:2@10\n"))
	if err != nil {
		t.Fatal(err)
	}
	if err := spec.Check(p); err != nil {
		t.Error(err)
	}
}

// TestOverheadParamErrors: a user's parameter files are checked as
// strictly as a trace.
func TestOverheadParamErrors(t *testing.T) {
	bundled := func(file string) string {
		b, err := queries.BundledOverheadParam(file)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	for _, tc := range []struct {
		file, text, want string
	}{
		{"items.tsv", "item\tkind\n", `items.tsv:1: expected the header "item\tkind\tcycles\tspread\tmnemonics\tpaper_table\tpaper_row", found "item\tkind"`},
		{"items.tsv", "# nothing\n", `items.tsv:1: expected the header "item\tkind\tcycles\tspread\tmnemonics\tpaper_table\tpaper_row", found none`},
		{"items.tsv", bundled("items.tsv") + "logic\tinstr\t1\n", "items.tsv:LAST: expected 7 tab-separated fields, found 3"},
		{"items.tsv", bundled("items.tsv") + "logic\tinstr\t1\t\t\t\t\n", "items.tsv:LAST: expected one row per item, found logic again (first on line 11)"},
		{"items.tsv", bundled("items.tsv") + "x\tinstruction\t1\t\t\t\t\n", `items.tsv:LAST: kind: expected one of instr, bivar, subr, action, agg, found "instruction"`},
		{"items.tsv", bundled("items.tsv") + "x\tinstr\t0x10\t\t\t\t\n", `items.tsv:LAST: cycles: expected a number >= 0, found "0x10"`},
		{"items.tsv", bundled("items.tsv") + "\tinstr\t1\t\t\t\t\n", "items.tsv:LAST: item: expected a value, found an empty field"},
		{"providers.tsv", strings.Replace(bundled("providers.tsv"), "fbt\t2313", "fbt\t-2313", 1), `providers.tsv:10: stage1: expected a number >= 0, found "-2313"`},
		{"providers.tsv", strings.Replace(bundled("providers.tsv"), "\tusr\t", "\tuser\t", 1), `providers.tsv:13: context: expected one of sys, usr, found "user"`},
		{"constants.tsv", strings.Replace(bundled("constants.tsv"), "csw\t8", "context_switch\t8", 1), "constants.tsv: expected a row named csw, found none"},
		{"constants.tsv", strings.Replace(bundled("constants.tsv"), "bandwidth\t684.53", "bandwidth\t0", 1), "constants.tsv: bandwidth: expected a number > 0, found 0"},
		{"refresh.tsv", strings.Replace(bundled("refresh.tsv"), "\tfalse\t", "\toff\t", 1), `refresh.tsv:9: aggregations: expected true or false, found "off"`},
		{"probe_costs.tsv", bundled("probe_costs.tsv") + "btf\tT\t*\tkprobe\t1\t\t\tprintf\t\t\t\n", `probe_costs.tsv:LAST: provider: expected one of fbt, sdt, syscall, pid, usdt, profile, found "kprobe"`},
		{"probe_costs.tsv", bundled("probe_costs.tsv") + "btf\tT\t*\t\t1\t\t\tprintf\t\t\t\n", "probe_costs.tsv:LAST: expected a provider or cycles, found neither"},
		{"probe_costs.tsv", bundled("probe_costs.tsv") + "btf\tT\t*\tsdt\t1\targ+cmp\t\t\t\t\t\n", "probe_costs.tsv:LAST: prob: expected the predicate's probability of being true, found an empty field"},
		{"probe_costs.tsv", bundled("probe_costs.tsv") + "btf\tT\t*\tsdt\t1\t\t0.5\t\t\t\t\n", "probe_costs.tsv:LAST: pred: expected a predicate for prob 0.5, found an empty field"},
		{"probe_costs.tsv", bundled("probe_costs.tsv") + "btf\tT\t*\tsdt\t1\t\t\tprint\t\t\t\n", `probe_costs.tsv:LAST: action: expected an item of DIR/items.tsv (or NAME@CYCLES), found "print"`},
		{"probe_costs.tsv", bundled("probe_costs.tsv") + "btf\tT\t*\tsdt\t0\t\t\tprintf\t\t\t\n", `probe_costs.tsv:LAST: ecbs: expected a whole number from 1 to 1000000, found "0"`},
		{"probe_costs.tsv", bundled("probe_costs.tsv") + "btf\tT T\t*\tsdt\t1\t\t\tprintf\t\t\t\n", `probe_costs.tsv:LAST: class: expected a glob pattern without spaces, found "T T"`},
		{"probe_costs.tsv", bundled("probe_costs.tsv") + "dtrace\tfbt\t*\tsdt\t1\t\t\tprintf\t\t\t\n", "probe_costs.tsv:LAST: expected one row per format, class, event, found dtrace fbt * again (first on line FBT)"},
	} {
		dir := t.TempDir()
		// items.tsv is always the user's, so that errors name DIR/items.tsv.
		if tc.file != "items.tsv" {
			writeParam(t, dir, "items.tsv", bundled("items.tsv"))
		}
		writeParam(t, dir, tc.file, tc.text)
		_, err := queries.ReadOverheadParams(dir)
		// LAST: the line a test appends; FBT: the bundled dtrace fbt row.
		lines := strings.Split(strings.TrimSuffix(tc.text, "\n"), "\n")
		fbt := 0
		for i, l := range lines {
			if strings.HasPrefix(l, "dtrace\tfbt\t*\t") && fbt == 0 {
				fbt = i + 1
			}
		}
		want := strings.NewReplacer("DIR", dir, "LAST", strconv.Itoa(len(lines)), "FBT", strconv.Itoa(fbt)).Replace(tc.want)
		want = dir + string(filepath.Separator) + want
		if err == nil || err.Error() != want {
			t.Errorf("%s:\n got %v\nwant %s", tc.file, err, want)
		}
	}
	dir := t.TempDir()
	if _, err := queries.ReadOverheadParams(dir); err == nil || err.Error() != dir+": expected one or more of items.tsv, providers.tsv, constants.tsv, refresh.tsv, probe_costs.tsv, found none" {
		t.Errorf("empty dir: %v", err)
	}
}

func writeParam(t *testing.T, dir, name, text string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestOverheadParamsFromDir: a file in the --params directory replaces
// the bundled one of that name, the others stay bundled.
func TestOverheadParamsFromDir(t *testing.T) {
	dir := t.TempDir()
	b, err := queries.BundledOverheadParam("probe_costs.tsv")
	if err != nil {
		t.Fatal(err)
	}
	// Measured (say) for this BTF tracer: 120 cycles per event.
	writeParam(t, dir, "probe_costs.tsv", string(b)+"btf\t*\t*\t\t\t\t\t\t120\t\t\n")
	p, err := queries.ReadOverheadParams(dir)
	if err != nil {
		t.Fatal(err)
	}
	db := dbtest.Open(t)
	if err := p.Load(context.Background(), db.SQL()); err != nil {
		t.Fatal(err)
	}
	dbtest.Ingest(t, db, "../samples/btf/seed-example.btf", ingestOptions())
	got := dbtest.Query(t, db.SQL(), "SELECT DISTINCT cycles, cost_row FROM overhead_run_probe_costs")
	if got != "120 | btf * *\n" {
		t.Errorf("with a BTF row: %q", got)
	}
	// Loading again replaces, it does not add.
	if err := p.Load(context.Background(), db.SQL()); err != nil {
		t.Fatal(err)
	}
	if got := dbtest.Query(t, db.SQL(), "SELECT count(*) FROM probe_costs WHERE format = 'btf'"); got != "1\n" {
		t.Errorf("btf rows after loading twice: %s", got)
	}
}
