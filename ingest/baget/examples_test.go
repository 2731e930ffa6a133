package baget

import "testing"

// TestMinirtos parses the bundled example and checks what the rest of the
// package relies on: every kind of object it names, the service records,
// the state rules.
func TestMinirtos(t *testing.T) {
	d, err := Example("minirtos.xml")
	if err != nil {
		t.Fatal(err)
	}
	if d.OS != "minirtos-2.1" || d.Arch != "ppc32" || !d.ABI.BigEndian || d.ABI.Pointer != 4 {
		t.Errorf("header: %s %s %+v", d.OS, d.Arch, d.ABI)
	}
	kinds := map[string]bool{}
	creates := 0
	for _, ev := range d.Events {
		if ev.Main != nil {
			kinds[ev.MainKind] = true
		}
		if ev.Creates != nil {
			creates++
		}
	}
	for _, k := range []string{"process", "thread", "semaphore", "mutex", "mqueue", "interrupt", "user"} {
		if !kinds[k] {
			t.Errorf("no event with a main object of kind %s", k)
		}
	}
	if creates != 5 {
		t.Errorf("%d event types create objects, want 5", creates)
	}
	for _, c := range []struct {
		name string
		kind RecordKind
		size int
	}{
		{"FILLER", RecFiller, 4},
		{"BLOCK", RecBlock, 8},
		{"FLUSH", RecInfo, 16},
		{"THREAD_SWITCH", RecEvent, 28},
		// ts 4..12, cpu 12, pid 16, mq 20, msg_no 24, len 28, msg_kind 32, head 40..48 (its double aligns it to 8)
		{"MQ_RECEIVE", RecEvent, 48},
		// ts 4, cpu 12, pid 16, object 20..36, value 40 (8-aligned), len 48, data 50
		{"USER_EVENT", RecEvent, 56},
	} {
		ev := d.ByName[c.name]
		if ev == nil {
			t.Errorf("no event %s", c.name)
			continue
		}
		if ev.Kind != c.kind || ev.Size != c.size {
			t.Errorf("%s: kind %v size %d, want %v %d", c.name, ev.Kind, ev.Size, c.kind, c.size)
		}
	}
	sw := d.ByName["THREAD_SWITCH"]
	if len(sw.States) != 2 || len(sw.CPURules) != 1 || sw.CPURules[0].To != CPUThr {
		t.Errorf("THREAD_SWITCH rules: %+v %+v", sw.States, sw.CPURules)
	}
	if h := d.ByName["MQ_RECEIVE"].Fields[9]; !h.Union || h.Selector == nil || h.Selector.Name != "msg_kind" || h.Offset != 40 {
		t.Errorf("MQ_RECEIVE head: %+v", h)
	}
	if u := d.ByName["USER_EVENT"]; u.Flexible == nil || u.Flexible.Name != "data" || u.Flexible.Offset != 50 {
		t.Errorf("USER_EVENT flexible: %+v", u.Flexible)
	}
}
