package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/traceduck/traceduck/ingest"
	_ "github.com/traceduck/traceduck/ingest/all"
	"github.com/traceduck/traceduck/internal/bench"
	"github.com/traceduck/traceduck/internal/dbtest"
)

// TestEveryFormat generates a small trace of each format with its truth,
// ingests it as the command's hint says (traceduck's detection where the
// format needs no flag, the written resource file or description
// otherwise) and compares the events with the count in the truth file.
func TestEveryFormat(t *testing.T) {
	for _, format := range bench.Formats {
		format := format
		t.Run(format, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			out := filepath.Join(dir, "trace."+format)
			truthPath := filepath.Join(dir, "truth.json")
			var stderr bytes.Buffer
			if code := run([]string{"--format", format, "--events", "3000", "--seed", "4", "--out", out, "--truth", truthPath}, &stderr); code != 0 {
				t.Fatalf("exit %d: %s", code, stderr.String())
			}
			var truth struct {
				Format string
				Events int64
				Truth  map[string]any
			}
			data, err := os.ReadFile(truthPath)
			if err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(data, &truth); err != nil {
				t.Fatal(err)
			}
			if truth.Format != format || truth.Events < 3000 && format != "toppers-asp" && format != "toppers-fmp" || len(truth.Truth) == 0 {
				t.Fatalf("truth file: format %q, %d events, %d truth fields", truth.Format, truth.Events, len(truth.Truth))
			}
			// The hint names the flags to read it with.
			hint := stderr.String()
			params := map[string]string{}
			for _, f := range []string{"resources", "description"} {
				if _, v, ok := strings.Cut(hint, "--"+f+" "); ok {
					params[f], _, _ = strings.Cut(v, " ")
				}
			}
			opt := ingest.Options{Params: params}
			if len(params) > 0 {
				opt.Format = format
			}
			db := dbtest.Open(t)
			res, err := ingest.Path(context.Background(), db, out, opt)
			if err != nil {
				t.Fatalf("ingest (hint %q): %v", hint, err)
			}
			if res.Format != format || res.Events != truth.Events {
				t.Errorf("ingested as %s, %d events; generated %s, %d events", res.Format, res.Events, format, truth.Events)
			}
			if want := "tracegen: " + out + ": " + strconv.FormatInt(truth.Events, 10) + " events; read it with: traceduck ingest --db DB --format " + format; !strings.HasPrefix(hint, want) {
				t.Errorf("hint %q, want it to start with %q", hint, want)
			}
		})
	}
}

// The same flags write the same bytes; bad flags are refused with the
// reason.
func TestDeterministicAndErrors(t *testing.T) {
	dir := t.TempDir()
	var sums []string
	for i := 0; i < 2; i++ {
		out := filepath.Join(dir, "t"+strconv.Itoa(i)+".kev")
		if code := run([]string{"--format", "kev", "--events", "2000", "--cores", "3", "--seed", "9", "--out", out}, new(bytes.Buffer)); code != 0 {
			t.Fatalf("exit %d", code)
		}
		data, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		sums = append(sums, string(data))
	}
	if sums[0] != sums[1] || len(sums[0]) < 2000*16 {
		t.Errorf("two runs wrote %d and %d bytes, not the same", len(sums[0]), len(sums[1]))
	}
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"--format", "pcap"}, 1, `tracegen: unknown format "pcap" (want one of btf, qnx, kev, tlv, toppers-asp, toppers-fmp, baget, dtrace, ftrace)` + "\n"},
		{[]string{"--format", "tlv"}, 1, "tracegen: format tlv writes its resource file beside the trace: give an output file\n"},
		{[]string{"--format", "toppers-asp", "--cores", "2", "--out", filepath.Join(dir, "a.log")}, 1, "tracegen: a TOPPERS/ASP log has one processor, not 2 (TOPPERS/FMP has several)\n"},
		{[]string{"--events", "0"}, 1, "tracegen: events must be > 0, got 0\n"},
		{[]string{"extra"}, 2, "tracegen: unexpected arguments [\"extra\"]\n"},
		{[]string{"--format", "qnx", "--inversion"}, 1, "tracegen: the priority inversion scenario is written in BTF only, not qnx\n"},
	} {
		var stderr bytes.Buffer
		if code := run(tc.args, &stderr); code != tc.code || stderr.String() != tc.want {
			t.Errorf("%q: exit %d, %q; want %d, %q", tc.args, code, stderr.String(), tc.code, tc.want)
		}
	}
}

// TestInversion: --inversion writes the scenario's tasks and priorities
// into a BTF trace, and its truth has the inversions.
func TestInversion(t *testing.T) {
	dir := t.TempDir()
	out, truth := filepath.Join(dir, "inv.btf"), filepath.Join(dir, "truth.json")
	if code := run([]string{"--inversion", "--events", "20000", "--cores", "1", "--out", out, "--truth", truth}, new(bytes.Buffer)); code != 0 {
		t.Fatalf("exit %d", code)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	js, err := os.ReadFile(truth)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(data, []byte(",T,Inv_High,0,activate,pri:")) || !bytes.Contains(js, []byte(`"Middle": "Inv_Mid"`)) {
		t.Errorf("the trace has no Inv_High with a priority, or the truth no inversion by Inv_Mid")
	}
}
