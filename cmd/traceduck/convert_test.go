package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var tlvTestdata = filepath.Join("..", "..", "ingest", "tlv", "testdata")

func TestConvertRules(t *testing.T) {
	t.Parallel()
	dir, _ := filepath.Abs(filepath.Join(tlvTestdata, "fig8"))
	headers, _ := filepath.Abs(filepath.Join(tlvTestdata, "common.resh"))
	r := td(t, dir, "convert", "--resources", "fig8.res", "--rules", "fig8.cnv", "--headers", headers, "fig8.log")
	if r.code != 0 {
		t.Fatal(r)
	}
	want := `[60692484]TASK4.state=WAITING
[60692914]TASK1.state=RUNNING
[60692914]CurrentContext.name=TASK1
[60694000]TASK1.state=READY
[60694000]TASK4.state=RUNNING
[60694000]CurrentContext.name=TASK4
`
	if r.stdout != want {
		t.Errorf("stdout:\n%s\nwant:\n%s", r.stdout, want)
	}
	if !strings.Contains(r.stderr, `fig8.log:2: info: no rule matches lines like "[{n}] dispatch from task {n}."`) {
		t.Errorf("stderr does not sum up the skipped lines:\n%s", r.stderr)
	}
	q := td(t, dir, "convert", "--quiet", "--resources", "fig8.res", "--rules", "fig8.cnv", "--headers", headers, "fig8.log")
	if q.code != 0 || q.stdout != want || q.stderr != "" {
		t.Errorf("--quiet:\n%s", q)
	}
	// The same through standard input.
	in, err := os.ReadFile(filepath.Join(dir, "fig8.log"))
	if err != nil {
		t.Fatal(err)
	}
	s := runIn(t, dir, in, "convert", "--quiet", "--resources", "fig8.res", "--rules", "fig8.cnv", "--headers", headers, "-")
	if s.code != 0 || s.stdout != want {
		t.Errorf("stdin:\n%s", s)
	}
}

func TestConvertStandardFormat(t *testing.T) {
	t.Parallel()
	dir, _ := filepath.Abs(filepath.Join(tlvTestdata, "fig3"))
	headers, _ := filepath.Abs(filepath.Join(tlvTestdata, "common.resh"))
	r := td(t, dir, "convert", "--resources", "fig3.res", "--headers", headers, "fig3.log")
	in, _ := os.ReadFile(filepath.Join(dir, "fig3.log"))
	if r.code != 0 || r.stdout != string(in) {
		t.Errorf("a standard-format log prints as it is:\n%s", r)
	}
}

// TestConvertSpaced: rules that write white space between the parts of a
// line (TLV's FMP rules: "...prcId = ${toPrcId}") convert to lines without
// it, as TLV writes them; so does a standard-format log that has some.
func TestConvertSpaced(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeFile(t, dir, "mig.res", []byte(`{ "TimeScale": "us", "TimeRadix": 10, "ConvertRules": ["mig"], "ResourceHeaders": ["fmp"],
	  "Resources": { "TASK1": { "Type": "Task", "Attributes": { "id": 1, "prcId": 1, "state": "RUNNABLE" } } } }`))
	writeFile(t, dir, "mig.cnv", []byte(`{ "mig": {
	  "\\[(?<time>\\d+)\\]:\\[(?<pid>\\d+)\\]: task (?<tskid>\\d+) migrates to processor (?<to>\\d+)\\.": [
	    "[${time}]$RES_NAME{Task(id==${tskid})}.prcId = ${to}",
	    "[${time}] $RES_NAME{Task(id==${tskid})} . preempt ( ${to} )" ] } }`))
	writeFile(t, dir, "mig.log", []byte("[100]:[2]: task 1 migrates to processor 2.\n"))
	r := td(t, dir, "convert", "--quiet", "--resources", "mig.res", "--rules", "mig.cnv", "mig.log")
	if want := "[100]TASK1.prcId=2\n[100]TASK1.preempt(2)\n"; r.code != 0 || r.stdout != want {
		t.Errorf("rules: %s\nwant stdout:\n%s", r, want)
	}
	writeFile(t, dir, "std.res", []byte(`{ "TimeScale": "us", "TimeRadix": 10, "ResourceHeaders": ["fmp"],
	  "Resources": { "TASK1": { "Type": "Task", "Attributes": { "id": 1, "prcId": 1, "state": "RUNNABLE" } } } }`))
	writeFile(t, dir, "std.log", []byte("[100]TASK1.prcId = 2\n[100] TASK1 . preempt ( 2 )\n"))
	r = td(t, dir, "convert", "--quiet", "--resources", "std.res", "std.log")
	if want := "[100]TASK1.prcId=2\n[100]TASK1.preempt(2)\n"; r.code != 0 || r.stdout != want {
		t.Errorf("standard format: %s\nwant stdout:\n%s", r, want)
	}
}

func TestConvertErrors(t *testing.T) {
	t.Parallel()
	dir, _ := filepath.Abs(filepath.Join(tlvTestdata, "fig8"))
	headers, _ := filepath.Abs(filepath.Join(tlvTestdata, "common.resh"))
	expectExit(t, td(t, dir, "convert", "fig8.log"), 2, "needs --resources")
	expectExit(t, td(t, dir, "convert", "--format", "btf", "--resources", "fig8.res", "fig8.log"), 2, "not a text log that converts")
	expectExit(t, td(t, dir, "convert", "--resources", "fig8.res"), 2, "one log")
	// A standard-format line that is not one: FILE:LINE:COL.
	bad := writeFile(t, t.TempDir(), "bad.log", []byte("[1]TASK1.state=READY\n[2]TASK1 state=RUNNING\n"))
	res, _ := filepath.Abs(filepath.Join(tlvTestdata, "fig3", "fig3.res"))
	r := td(t, dir, "convert", "--resources", res, "--headers", headers, bad)
	expectExit(t, r, 1,
		bad+`:2: column 10: expected "." after the resource, found "state=RUNNING"`)
}

// TestConvertTOPPERS converts the real asp_short.log with the bundled
// rules: as many lines as TLV's own conversion.
func TestConvertTOPPERS(t *testing.T) {
	t.Parallel()
	ext := filepath.Join("..", "..", "..", "shared", "testdata-external", "toppers")
	log := filepath.Join(ext, "YixiaoLi__tlv4mc__sampleFiles__SampleLog__asp__asp_short.log")
	res := filepath.Join(ext, "YixiaoLi__tlv4mc__sampleFiles__SampleLog__asp__asp_short.res")
	if _, err := os.Stat(log); err != nil {
		t.Skip("TOPPERS logs not available")
	}
	log, _ = filepath.Abs(log)
	res, _ = filepath.Abs(res)
	r := td(t, t.TempDir(), "convert", "--quiet", "--format", "toppers-asp", "--resources", res, log)
	if r.code != 0 {
		t.Fatal(r)
	}
	lines := strings.Split(strings.TrimSuffix(r.stdout, "\n"), "\n")
	if len(lines) != 3087 || lines[0] != "[1926099]LOGTASK.dispatch()" || lines[len(lines)-1] != "[98544800]MAIN_TASK.leaveSVC(ena_dsp, ercd=0.)" {
		t.Errorf("%d lines, first %q, last %q", len(lines), lines[0], lines[len(lines)-1])
	}
}
