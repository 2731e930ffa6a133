package main

import (
	"strings"
	"testing"
)

// TestBagetDescribe prints a bundled record type's field tree (the
// layout the reader uses: THREAD_SWITCH of minirtos.xml, big-endian
// ppc32: a 4-byte descriptor, a timespec at 4, the CPU at 12, pid_t at 16
// after padding, two thread pointers) and refuses what it cannot read.
func TestBagetDescribe(t *testing.T) {
	dir := t.TempDir()
	got := mustRun(t, dir, nil, "baget", "describe", "--example", "minirtos.xml", "--event", "THREAD_SWITCH")
	want := `description os=minirtos-2.1 arch=ppc32 endian=big pointer=4 long_long_align=8 double_align=8 time_unit=ns
event THREAD_SWITCH id=22 kind=event group=sched size=28 align=4 time=ts cpu=cpu main=next pid=pid main_kind=thread
  type_record unsigned short off=0 size=2 align=2
  size_record unsigned short off=2 size=2 align=2
  ts struct timespec off=4 size=8 align=4
    ts.tv_sec long off=4 size=4 align=4
    ts.tv_nsec long off=8 size=4 align=4
  cpu unsigned char off=12 size=1 align=1
  pid pid_t off=16 size=4 align=4 object=process
  prev thread_ptr off=20 size=4 align=4 object=thread
  next thread_ptr off=24 size=4 align=4 object=thread
  state prev -> thrReady from thrRun
  state next -> thrRun
  cpu -> cpuThr next
`
	if got != want {
		t.Errorf("baget describe --event THREAD_SWITCH:\n%s\nwant\n%s", got, want)
	}
	if all := mustRun(t, dir, nil, "baget", "describe", "--example", "minirtos.xml"); strings.Count(all, "\nevent ") < 20 {
		t.Errorf("the whole description has %d record types", strings.Count(all, "\nevent "))
	}
	bad := writeFile(t, dir, "bad.xml", []byte("<description os=\"x\">\n  <abi pointer=\"3\"/>\n</description>\n"))
	r := td(t, dir, "baget", "describe", "--description", bad)
	if r.code != 1 || !strings.HasPrefix(r.stderr, "traceduck: "+bad+":") {
		t.Errorf("a bad description: %s", r)
	}
	expectExit(t, td(t, dir, "baget", "describe", "--example", "minirtos.xml", "--event", "NOPE"), 1, "--event NOPE: the description has no record type NOPE (it has BLOCK, CPU_IDLE,")
	expectExit(t, td(t, dir, "baget", "describe"), 2, "give --description FILE or --example NAME")
}
