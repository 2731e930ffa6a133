package main

import (
	"strings"
	"testing"
)

// TestBagetDescribe prints a bundled record type's field tree (the
// layout the reader uses: THREAD_SWITCH of minirtos.xml, big-endian
// ppc32: a 4-byte descriptor, a timespec at 4, the CPU at 12, pid_t at 16
// after padding, two thread pointers shown in hex), the display formats
// of fields, and refuses what it cannot read.
func TestBagetDescribe(t *testing.T) {
	t.Parallel()
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
  prev thread_ptr off=20 size=4 align=4 object=thread format=hex
  next thread_ptr off=24 size=4 align=4 object=thread format=hex
  state prev -> thrReady from thrRun
  state next -> thrRun
  cpu -> cpuThr next
`
	if got != want {
		t.Errorf("baget describe --event THREAD_SWITCH:\n%s\nwant\n%s", got, want)
	}
	// Formats (docs/baget-format.md 2.11): an inline enum, a flags field in
	// what was padding, a named enum shared by two record types.
	got = mustRun(t, dir, nil, "baget", "describe", "--example", "minirtos.xml", "--event", "THREAD_BLOCK", "--event", "THREAD_CREATE", "--event", "MQ_SEND")
	for _, line := range []string{
		"\n  reason unsigned char off=24 size=1 align=1 format=enum{1=SLEEP,2=SEM,3=MUTEX,4=MQ}\n",
		"\n  opts unsigned char off=13 size=1 align=1 format=flags{0=FPU,1=STACK_CHECK,2=SUPERVISOR}\n",
		"\n  thread thread_ptr off=20 size=4 align=4 object=thread format=hex\n",
		"\n  msg_kind unsigned char off=34 size=1 align=1 format=enum:msg_kind{0=raw,1=code,2=text,3=value}\n",
		"\n      head.code unsigned int off=40 size=4 align=4 format=hex\n",
	} {
		if !strings.Contains(got, line) {
			t.Errorf("describe THREAD_BLOCK, THREAD_CREATE, MQ_SEND: no line %q in\n%s", strings.TrimSpace(line), got)
		}
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
