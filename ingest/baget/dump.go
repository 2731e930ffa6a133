package baget

import (
	"fmt"
	"io"
	"strconv"
	"strings"
)

// Dump prints the field trees of all record types as indented text: one
// line per node with its path, type, offset, size and alignment (the golden
// form of the tests, and a way for users to check a description).
func (d *Description) Dump(w io.Writer) {
	d.DumpEvents(w, nil)
}

// DumpEvents is Dump for the record types keep accepts (nil: all).
func (d *Description) DumpEvents(w io.Writer, keep func(name string) bool) {
	endian := "little"
	if d.ABI.BigEndian {
		endian = "big"
	}
	fmt.Fprintf(w, "description os=%s arch=%s endian=%s pointer=%d long_long_align=%d double_align=%d time_unit=%s\n",
		d.OS, d.Arch, endian, d.ABI.Pointer, d.ABI.LongLongAlign, d.ABI.DoubleAlign, d.TimeUnit)
	for _, ev := range d.Events {
		if keep != nil && !keep(ev.Name) {
			continue
		}
		fmt.Fprintf(w, "event %s id=%d kind=%s group=%s size=%d align=%d", ev.Name, ev.ID, ev.Kind, ev.Group, ev.Size, ev.Align)
		for _, r := range []struct {
			k string
			n *Node
		}{{"time", ev.Time}, {"cpu", ev.CPU}, {"main", ev.Main}, {"pid", ev.Pid}, {"number", ev.Number}, {"context", ev.Context}} {
			if r.n != nil {
				fmt.Fprintf(w, " %s=%s", r.k, r.n.Path)
			}
		}
		if ev.Main != nil {
			fmt.Fprintf(w, " main_kind=%s", ev.MainKind)
		}
		fmt.Fprintln(w)
		dumpNodes(w, ev.Fields, 1)
		if c := ev.Creates; c != nil {
			fmt.Fprintf(w, "  creates %s", c.Field.Path)
			if c.Name != nil {
				fmt.Fprintf(w, " name=%s", c.Name.Path)
			}
			if c.Parent != nil {
				fmt.Fprintf(w, " parent=%s", c.Parent.Path)
			}
			fmt.Fprintln(w)
		}
		for _, r := range ev.States {
			obj := "context"
			if r.Field != nil {
				obj = r.Field.Path
			}
			fmt.Fprintf(w, "  state %s -> %s", obj, r.To)
			if r.From != nil {
				fmt.Fprintf(w, " from %s", strings.Join(r.From, "|"))
			}
			fmt.Fprintln(w)
		}
		for _, r := range ev.CPURules {
			fmt.Fprintf(w, "  cpu -> %s", r.To)
			if r.Field != nil {
				fmt.Fprintf(w, " %s", r.Field.Path)
			}
			if r.From != nil {
				fmt.Fprintf(w, " from %s", strings.Join(r.From, "|"))
			}
			fmt.Fprintln(w)
		}
		for _, r := range ev.Syncs {
			el, field, actor := "resource", "(the one waited for)", "context"
			if r.Message {
				el = "message"
			}
			if r.Field != nil {
				field = r.Field.Path
			}
			if r.Actor != nil {
				actor = r.Actor.Path
			}
			fmt.Fprintf(w, "  %s %s %s by %s", el, r.Verb, field, actor)
			if r.ID != nil {
				fmt.Fprintf(w, " id %s", r.ID.Path)
			}
			if r.Test != nil {
				fmt.Fprintf(w, " if %d <= %s <= %d", r.Min, r.Test.Path, r.Max)
			}
			fmt.Fprintln(w)
		}
	}
}

func dumpNodes(w io.Writer, ns []*Node, depth int) {
	for _, n := range ns {
		t := n.TypeName
		for _, d := range n.Dims {
			t += "[" + strconv.Itoa(d) + "]"
		}
		extra := ""
		if n.Union {
			extra += " union"
			if n.Selector != nil {
				extra += " selector=" + n.Selector.Path
			}
		}
		if n.Dims != nil {
			extra += " elem=" + strconv.Itoa(n.ElemSize)
		}
		if n.Base != nil && n.Base.Kind == KindObject {
			extra += " object=" + n.Base.ObjKind
		}
		if n.Format != nil {
			extra += " format=" + n.Format.String()
		}
		fmt.Fprintf(w, "%s%s %s off=%d size=%d align=%d%s", strings.Repeat("  ", depth), n.Path, t, n.Offset, n.Size, n.Align, extra)
		fmt.Fprintln(w)
		if n.Union {
			for _, c := range n.Children {
				fmt.Fprintf(w, "%scase %d:\n", strings.Repeat("  ", depth+1), c.Case)
				dumpNodes(w, []*Node{c}, depth+2)
			}
			continue
		}
		dumpNodes(w, n.Children, depth+1)
	}
}
