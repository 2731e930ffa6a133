package dtrace

import (
	"bufio"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/traceduck/traceduck/ingest"
	"github.com/traceduck/traceduck/internal/dbtest"
)

// histogramFiles lists the DTrace files the MANIFEST says hold
// histograms, with the number it gives (counted by whoever collected
// them, not by this package).
func histogramFiles(t *testing.T) map[string]int {
	t.Helper()
	f, err := os.Open(filepath.Join(externalDir, "MANIFEST.tsv"))
	if err != nil {
		t.Skipf("no external test data: %v", err)
	}
	defer f.Close()
	out := map[string]int{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Split(sc.Text(), "\t")
		if len(fields) < 8 || fields[0] != "dtrace" {
			continue
		}
		n, err := strconv.Atoi(strings.TrimSuffix(fields[7], " histograms"))
		if err != nil {
			t.Fatalf("MANIFEST: %q: %v", fields[7], err)
		}
		if n > 0 {
			out[fields[1]] = n
		}
	}
	if len(out) == 0 {
		t.Fatal("MANIFEST lists no DTrace file with histograms")
	}
	return out
}

// distRowText is a distribution row, found directly in the text.
var distRowText = regexp.MustCompile(`^\s*(< -?\d+|>= -?\d+|-?\d+) [ @|]{41} (-?\d+)\s*$`)

// TestExternalHistograms ingests every histogram-bearing file of the
// toolkit's examples through the ingester and checks, against the text
// read a second way (a regular expression over the raw lines), that every
// row is there with its value and count at its line, and as many blocks
// as the MANIFEST counts.
func TestExternalHistograms(t *testing.T) {
	files := histogramFiles(t)
	db := dbtest.Open(t)
	for name, blocks := range files {
		path := filepath.Join(externalDir, "dtrace", name)
		res := dbtest.Ingest(t, db, path, ingest.Options{Format: "dtrace"})
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		var want strings.Builder
		for i, line := range strings.Split(string(data), "\n") {
			if m := distRowText.FindStringSubmatch(line); m != nil {
				want.WriteString(strconv.Itoa(i+1) + " | " + m[1] + " | " + m[2] + "\n")
			}
		}
		got := dbtest.Query(t, db.SQL(), "SELECT src_line, label, count FROM histograms WHERE run_id = ? ORDER BY src_line", res.RunID)
		if got != want.String() {
			t.Errorf("%s: rows differ from the text\ngot\n%s\nwant\n%s", name, got, want.String())
		}
		// a block's rows are on consecutive lines; a header comes between blocks
		n := dbtest.Query(t, db.SQL(), `SELECT count(*) FILTER (WHERE prev IS NULL OR src_line <> prev + 1) FROM
			(SELECT src_line, lag(src_line) OVER (ORDER BY src_line) AS prev FROM histograms WHERE run_id = ?)`, res.RunID)
		if n != strconv.Itoa(blocks)+"\n" {
			t.Errorf("%s: %s distributions, the MANIFEST counts %d", name, strings.TrimSpace(n), blocks)
		}
		if d := dbtest.Query(t, db.SQL(), "SELECT src_line, message FROM diagnostics WHERE run_id = ?", res.RunID); d != "" {
			t.Errorf("%s: diagnostics:\n%s", name, d)
		}
	}
}

// TestExternalBlocks checks a few blocks in full: bounds from the
// function, keys, and the sums, worked out by hand from the text.
func TestExternalBlocks(t *testing.T) {
	histogramFiles(t)
	db := dbtest.Open(t)
	ingestOne := func(name string) int32 {
		return dbtest.Ingest(t, db, filepath.Join(externalDir, "dtrace", "opendtrace__toolkit__Examples__"+name), ingest.Options{Format: "dtrace"}).RunID
	}
	cases := []struct {
		file, sql, want string
	}{
		// bitesize.d: printa("%8d  %S\n%@d\n"): keys "PID  CMD" with a \0,
		// quantize of I/O sizes; 1452+91+33+97 = 1673 for find.
		{"bitesize_example.txt", `SELECT agg, title, key, keys, func, sum(count), min(bucket_lo), max(bucket_hi) FROM histograms WHERE run_id = ? GROUP BY ALL ORDER BY min(src_line)`,
			"#1 | PID  CMD | 7110  -bash | [\"7110\",\"-bash\"] | quantize | 3 | 512 | 16384\n" +
				"#1 | PID  CMD | 7110  sync | [\"7110\",\"sync\"] | quantize | 8 | 512 | 32768\n" +
				"#1 | PID  CMD | 0  sched | [\"0\",\"sched\"] | quantize | 11 | 1024 | 32768\n" +
				"#1 | PID  CMD | 7109  find / | [\"7109\",\"find /\"] | quantize | 1673 | 512 | 32768\n" +
				"#1 | PID  CMD | 3  fsflush | [\"3\",\"fsflush\"] | quantize | 449 | 4096 | 32768\n" +
				"#1 | PID  CMD | 7108  tar cf /dev/null / | [\"7108\",\"tar cf /dev/null /\"] | quantize | 5220 | 256 | 131072\n"},
		// priclass.d: lquantize(pri, 0, 170, 10): < 0 and >= 170 rows
		{"priclass_example.txt", `SELECT key, label, bucket_lo, bucket_hi, count FROM histograms WHERE run_id = ? AND key = 'SYS' AND (label LIKE '<%' OR label LIKE '>%' OR label IN ('0', '60', '160')) ORDER BY src_line`,
			"SYS | < 0 | NULL | 0 | 4959\nSYS | 0 | 0 | 10 | 0\nSYS | 60 | 60 | 70 | 30\nSYS | 160 | 160 | 170 | 50\nSYS | >= 170 | 170 | NULL | 0\n"},
		// oneliners: quantize with a -1 bucket (holds -1 only)
		{"oneliners_examples.txt", `SELECT key, label, bucket_lo, bucket_hi, count FROM histograms WHERE run_id = ? AND src_line BETWEEN 154 AND 156 ORDER BY src_line`,
			"Xorg | -1 | -1 | 0 | 0\nXorg | 0 | 0 | 1 | 26\nXorg | 1 | 1 | 2 | 0\n"},
		// oneliners: DTrace's default output of count() after ^C (sum by awk)
		{"oneliners_examples.txt", `SELECT agg, count(*), sum(value), min(key), max(key) FROM aggregations WHERE run_id = ? AND src_line BETWEEN 286 AND 306 GROUP BY agg`,
			"#11 | 21 | 18714 | TS | uppc\n"},
		// fddist.d: lquantize(fd, 0, 255, 1); the dtrace block alone (0, 1, 2)
		// would fit quantize too, its siblings tell lquantize
		{"fddist_example.txt", `SELECT key, label, func, bucket_lo, bucket_hi FROM histograms WHERE run_id = ? AND src_line BETWEEN 11 AND 13 ORDER BY src_line`,
			"EXEC: dtrace           PID: 3288 | 0 | lquantize | 0 | 1\nEXEC: dtrace           PID: 3288 | 1 | lquantize | 1 | 2\nEXEC: dtrace           PID: 3288 | 2 | lquantize | 2 | 3\n"},
	}
	runs := map[string]int32{}
	for _, tc := range cases {
		id, ok := runs[tc.file]
		if !ok {
			id = ingestOne(tc.file)
			runs[tc.file] = id
		}
		if got := dbtest.Query(t, db.SQL(), tc.sql, id); got != tc.want {
			t.Errorf("%s: %s\ngot\n%swant\n%s", tc.file, tc.sql, got, tc.want)
		}
	}
}

// TestExternalEveryFile: every DTrace file, with histograms or not,
// ingests without error (prose, commands, snoop-style columns).
func TestExternalEveryFile(t *testing.T) {
	histogramFiles(t)
	paths, err := filepath.Glob(filepath.Join(externalDir, "dtrace", "*"))
	if err != nil || len(paths) == 0 {
		t.Skip("no DTrace files")
	}
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := aggRead(t, string(data), false, ScalarsAuto); err != nil {
			t.Errorf("%s: %v", filepath.Base(p), err)
		}
	}
}
