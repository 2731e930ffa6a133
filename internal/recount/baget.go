package recount

import (
	"cmp"
	"encoding/binary"
	"fmt"
	"os"
	"strconv"
)

// Baget is what ReadBaget counts in a log: per CPU, the
// time its holder was known and, of it, busy (a thread or an interrupt
// held it); per holder (by name, as the CPU states name it), the time it
// held a CPU; per CPU and holder ("idle": none), the time it held it.
// Complete intervals only: from a <cpu> rule that applied to the next one
// that changed the holder.
type Baget struct {
	Known, Busy map[int]int64
	Held        map[string]int64
	HeldCPU     map[int]map[string]int64
}

// ReadBaget reads a minirtos log (the bundled example's records, on
// i386 or ppc64, as internal/tracegen writes them) with the test's own
// decoding, independently of the ingester: the header, the blocks, the
// records by their descriptor, and the four records the example's <cpu>
// rules are on, at offsets worked out by hand from the C layout
// (timespec at P, cpu at 3P, then pid and the thread pointers aligned to
// 4 and P, or the irq number at 3P+2). It applies those rules as
// docs/baget-format.md 2.7 says: THREAD_SWITCH runs next (none for 0),
// CPU_IDLE runs none, INTR_ENTER enters the irq over what runs,
// INTR_EXIT (from="cpuIntr") returns from the innermost one; unknown
// before the first rule and after a return to what an interrupt entered
// over unknown interrupted.
func ReadBaget(path string) (Baget, error) {
	out := Baget{Known: map[int]int64{}, Busy: map[int]int64{}, Held: map[string]int64{}, HeldCPU: map[int]map[string]int64{}}
	b, err := os.ReadFile(path)
	if err != nil {
		return out, err
	}
	if len(b) < 80 || string(b[:8]) != "BAGETTRC" {
		return out, fmt.Errorf("%s: not a log", path)
	}
	var o binary.ByteOrder = binary.LittleEndian
	if b[8] == 'B' {
		o = binary.BigEndian
	}
	p := 4 // pointer size by the arch
	if arch := string(b[56:61]); arch == "ppc64" {
		p = 8
	}
	word := func(r []byte, off int) uint64 { // a long or a pointer
		if p == 4 {
			return uint64(o.Uint32(r[off:]))
		}
		return o.Uint64(r[off:])
	}
	hs, bs := int(o.Uint16(b[10:])), int(o.Uint32(b[12:]))
	tsOf := func(r []byte) int64 { return int64(word(r, p))*1e9 + int64(word(r, 2*p)) }
	ptrOff := (3*p + 8 + p - 1) / p * p // the first pointer after ts, cpu, pid

	type cpu struct {
		known, unkBase bool
		thread         uint64 // 0: none
		irqs           []uint64
		open           bool
		holder         string // "" for none
		since          int64
	}
	cpus := map[int]*cpu{}
	names := map[uint64]string{}
	name := func(thread uint64) string {
		if n, ok := names[thread]; ok {
			return n
		}
		return "thread " + strconv.FormatUint(thread, 10)
	}
	show := func(n int, c *cpu, ts int64) {
		h := ""
		switch {
		case !c.known:
			return
		case len(c.irqs) > 0:
			h = "interrupt " + strconv.FormatUint(c.irqs[len(c.irqs)-1], 10)
		case c.thread != 0:
			h = name(c.thread)
		}
		if c.open && c.holder == h {
			return
		}
		if c.open {
			d := ts - c.since
			hold(out.HeldCPU, out.Known, out.Busy, n, cmp.Or(c.holder, "idle"), d, c.holder != "")
			if c.holder != "" {
				out.Held[c.holder] += d
			}
		}
		c.open, c.holder, c.since = true, h, ts
	}
	for off := hs; off+bs <= len(b); off += bs {
		blk := b[off : off+bs]
		for r := 0; r+4 <= len(blk); {
			typ, size := o.Uint16(blk[r:]), int(o.Uint16(blk[r+2:]))
			if typ == 0 || size < 4 || r+size > len(blk) { // filler: the block's end
				break
			}
			rec := blk[r : r+size]
			r += size
			if typ == 20 { // THREAD_CREATE: the thread's name after its prio byte
				n := rec[ptrOff+p+1 : ptrOff+p+17]
				for i, ch := range n {
					if ch == 0 {
						n = n[:i]
						break
					}
				}
				names[word(rec, ptrOff)] = string(n)
				continue
			}
			if typ != 22 && typ != 23 && typ != 30 && typ != 31 {
				continue
			}
			ts, n := tsOf(rec), int(rec[3*p])
			c := cpus[n]
			if c == nil {
				c = &cpu{}
				cpus[n] = c
			}
			switch typ {
			case 22: // THREAD_SWITCH: <cpu to="cpuThr" field="next"/>
				next := word(rec, ptrOff+p)
				if next == 0 {
					continue
				}
				for m, d := range cpus {
					if m != n && d.thread == next {
						d.thread = 0
						show(m, d, ts)
					}
				}
				c.known, c.unkBase, c.thread = true, false, next
			case 23: // CPU_IDLE: <cpu to="cpuIdle"/>
				c.known, c.unkBase, c.thread = true, false, 0
			case 30: // INTR_ENTER: <cpu to="cpuIntr" field="irq"/>
				irq := uint64(o.Uint16(rec[3*p+2:]))
				if irq == 0 || len(c.irqs) == 64 {
					continue // (nested deeper: not in the example's logs)
				}
				if !c.known {
					c.known, c.unkBase = true, true
				}
				c.irqs = append(c.irqs, irq)
			case 31: // INTR_EXIT: <cpu to="return" from="cpuIntr"/>
				if !c.known || len(c.irqs) == 0 {
					continue
				}
				c.irqs = c.irqs[:len(c.irqs)-1]
				if c.unkBase && len(c.irqs) == 0 {
					show(n, c, ts)
					*c = cpu{} // back to unknown; what opened at ts held nothing
					continue
				}
			}
			show(n, c, ts)
		}
	}
	return out, nil
}

// Answers are the recount's answers about the CPUs (Q1, Q2), keyed by
// CPU number and the holder's name ("idle": none).
func (r Baget) Answers() Answers {
	return cpuAnswers("", r.Busy, r.HeldCPU, func(h string) bool { return h != "idle" })
}
