package schema

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
)

// rowSink keeps the rows of some tables as text, symbol ids resolved.
type rowSink struct {
	syms map[int64]string
	rows map[string][]map[string]string
}

func (s *rowSink) Put(table string, rec arrow.Record) error {
	if s.rows == nil {
		s.rows, s.syms = map[string][]map[string]string{}, map[int64]string{}
	}
	for r := 0; r < int(rec.NumRows()); r++ {
		row := map[string]string{}
		for c := 0; c < int(rec.NumCols()); c++ {
			col := rec.Column(c)
			if col.IsNull(r) {
				row[rec.ColumnName(c)] = "NULL"
				continue
			}
			row[rec.ColumnName(c)] = valueText(col, r)
		}
		if table == TableSymbols {
			n, _ := strconv.ParseInt(row["sym"], 10, 64)
			s.syms[n] = row["name"]
		}
		s.rows[table] = append(s.rows[table], row)
	}
	return nil
}

func valueText(col arrow.Array, r int) string {
	switch a := col.(type) {
	case *array.Dictionary:
		return valueText(a.Dictionary(), a.GetValueIndex(r))
	case *array.String:
		return a.Value(r)
	case *array.Boolean:
		return strconv.FormatBool(a.Value(r))
	}
	return col.ValueStr(r)
}

func (s *rowSink) sym(v string) string {
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return v
	}
	return s.syms[n]
}

// TestCPUTracker runs the scripts of testdata/cpus/*.txtar: the verbs a
// format speaks to the tracker, and the CPU intervals and levels that
// must come out. Script lines:
//
//	words tasks=T interrupts=I idle=S idlegroup=G kernel=K
//	idlenames REGEXP...           the format's idle-task names
//	user GLOB...                  --idle-task patterns (RunInfo.IdleTasks)
//	cpu N NAME                    processor N's object (N may be -1: NoCPU)
//	declare H ROLE [proc=P[:PID]] [group=G]   ROLE task|interrupt|idle|kernel
//	rename H NEW                  the holder's object is renamed
//	run N H TS | stop H TS | idle N TS | enter N H TS | leave N H TS | unknown N TS | forget N TS
//	holder N | base N | interrupts N   what the tracker says (into result)
//	end TS                        last event
//
// intervals: "CPU holder(instance name) state start..end [cut]", in the
// order written; levels: "state level parent".
func TestCPUTracker(t *testing.T) {
	runScriptCases(t, "testdata/cpus/*.txtar", []string{"intervals", "levels", "result"}, false, runCPUScript)
}

func runCPUScript(t *testing.T, script string) map[string]string {
	t.Helper()
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	var lines [][]string
	info := RunInfo{RunID: 1, Name: "cpus"}
	for _, l := range strings.Split(script, "\n") {
		f := strings.Fields(l)
		if len(f) == 0 || strings.HasPrefix(f[0], "#") {
			continue
		}
		if f[0] == "user" {
			info.IdleTasks = append(info.IdleTasks, f[1:]...)
			continue
		}
		lines = append(lines, f)
	}
	sink := &rowSink{}
	w := NewRunWriter(info, sink, mem)
	w.SetBatchRows(3)
	cpus := w.CPUs()
	num := func(s string) int64 {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			t.Fatalf("%q: %v", s, err)
		}
		return n
	}
	obj := func(name string) ObjectID { return w.Object("task", name) }
	var result []string
	var last int64
	procs := map[string]ObjectID{}
	ev := func(ts int64) Seq {
		last = max(last, ts)
		seq, err := w.Event(&Event{TS: ts, CPU: NoCPU, Class: w.Sym("x"), Event: w.Sym("x"), Context: NoObject, Object: NoObject,
			SourceInstance: NoInstance, TargetInstance: NoInstance})
		if err != nil {
			t.Fatal(err)
		}
		return seq
	}
	for _, f := range lines {
		var err error
		switch f[0] {
		case "words":
			var words CPUWords
			for _, kv := range f[1:] {
				k, v, _ := strings.Cut(kv, "=")
				switch k {
				case "tasks":
					words.Tasks = v
				case "interrupts":
					words.Interrupts = v
				case "idle":
					words.Idle = v
				case "idlegroup":
					words.IdleGroup = v
				case "kernel":
					words.Kernel = v
				}
			}
			cpus.SetWords(words)
		case "idlenames":
			cpus.IdleNames(f[1:]...)
		case "cpu":
			id := w.Object("cpu", f[2])
			cpus.Add(CPU(num(f[1])), id)
		case "declare":
			spec := HolderSpec{}
			switch f[2] {
			case "task":
				spec.Role = RoleTask
			case "interrupt":
				spec.Role = RoleInterrupt
			case "idle":
				spec.Role = RoleIdle
			case "kernel":
				spec.Role = RoleKernel
			}
			for _, kv := range f[3:] {
				k, v, _ := strings.Cut(kv, "=")
				switch k {
				case "proc":
					// NAME or NAME:PID (processes that share a name)
					if p, ok := procs[v]; ok {
						spec.Process = p
						break
					}
					name, pid, hasPID := strings.Cut(v, ":")
					spec.Process = w.NewObject("process", name)
					if hasPID {
						w.SetNativeID(spec.Process, num(pid))
					}
					procs[v] = spec.Process
				case "group":
					spec.Group = v
				}
			}
			cpus.Declare(obj(f[1]), spec)
		case "rename":
			w.SetName(obj(f[1]), f[2])
		case "run":
			ts := num(f[3])
			err = cpus.Run(CPU(num(f[1])), obj(f[2]), ts, ev(ts))
		case "stop":
			ts := num(f[2])
			var ok bool
			ok, err = cpus.Stop(obj(f[1]), ts, ev(ts))
			result = append(result, fmt.Sprintf("stop %s %v", f[1], ok))
		case "idle":
			ts := num(f[2])
			err = cpus.Idle(CPU(num(f[1])), ts, ev(ts))
		case "enter":
			ts := num(f[3])
			var ok bool
			ok, err = cpus.Enter(CPU(num(f[1])), obj(f[2]), ts, ev(ts))
			if !ok {
				result = append(result, "enter "+f[2]+" refused")
			}
		case "leave":
			ts := num(f[3])
			var cut int
			var ok bool
			cut, ok, err = cpus.Leave(CPU(num(f[1])), obj(f[2]), ts, ev(ts))
			result = append(result, fmt.Sprintf("leave %s cut=%d ok=%v", f[2], cut, ok))
		case "unknown":
			ts := num(f[2])
			err = cpus.Unknown(CPU(num(f[1])), ts, ev(ts))
		case "forget":
			ts := num(f[2])
			err = cpus.Forget(CPU(num(f[1])), ts, ev(ts))
		case "base":
			h := cpus.Base(CPU(num(f[1])))
			name := "none"
			if h != NoObject {
				name = w.ObjectName(h)
			}
			result = append(result, "base "+f[1]+" "+name)
		case "interrupts":
			n := CPU(num(f[1]))
			line := "interrupts " + f[1] + ":"
			for i := 0; cpus.Interrupt(n, i) != NoObject; i++ {
				line += " " + w.ObjectName(cpus.Interrupt(n, i))
			}
			result = append(result, line)
		case "holder":
			h := cpus.Holder(CPU(num(f[1])))
			name := "none"
			if h != NoObject {
				name = w.ObjectName(h)
			}
			result = append(result, "holder "+f[1]+" "+name)
		case "end":
			ev(num(f[1]))
		default:
			t.Fatalf("unknown verb %q", f[0])
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	_ = last
	if err := w.Finish(time.Now()); err != nil {
		result = append(result, "finish: "+err.Error())
	}
	names := map[string]string{}
	for _, o := range sink.rows[TableObjects] {
		names[o["object_id"]] = o["name"]
		if o["attrs"] != "NULL" {
			result = append(result, "attrs "+o["name"]+" "+o["attrs"])
		}
	}
	for _, r := range sink.rows[TableRuns] {
		result = append(result, "meta "+r["meta"])
	}
	var iv []string
	for _, r := range sink.rows[TableStateIntervals] {
		if names[r["object_id"]] == "" {
			continue
		}
		holder := "-"
		if r["instance"] != "0" {
			holder = names[r["instance"]]
		}
		cut := ""
		if r["truncated"] == "true" {
			cut = " cut"
		}
		iv = append(iv, fmt.Sprintf("%s cpu=%s %s %s %s..%s%s", names[r["object_id"]], r["cpu"], holder, sink.sym(r["state_sym"]), r["start_ts"], r["end_ts"], cut))
	}
	var lv []string
	for _, r := range sink.rows[TableStateLevels] {
		lv = append(lv, fmt.Sprintf("%s %s %s", r["state"], r["level"], r["parent_state"]))
	}
	sort.Strings(lv)
	return map[string]string{"intervals": strings.Join(iv, "\n"), "levels": strings.Join(lv, "\n"), "result": strings.Join(result, "\n")}
}

// TestGlobRegexp checks the --idle-task pattern syntax.
func TestGlobRegexp(t *testing.T) {
	for _, c := range []struct {
		glob string
		yes  []string
		no   []string
	}{
		{"IDLE*", []string{"IDLE", "IDLE1", "IDLE/x"}, []string{"xIDLE", "idle"}},
		{"*IDLE?", []string{"[0/2]IDLE0", "IDLE1"}, []string{"IDLE", "IDLE12"}},
		{"idle[0-9]", []string{"idle3"}, []string{"idle", "idlex"}},
		{"t[!0-9]", []string{"tx"}, []string{"t1"}},
		{"a.b", []string{"a.b"}, []string{"axb"}},
	} {
		re, err := GlobRegexp(c.glob)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range c.yes {
			if !re.MatchString(s) {
				t.Errorf("%q does not match %q", c.glob, s)
			}
		}
		for _, s := range c.no {
			if re.MatchString(s) {
				t.Errorf("%q matches %q", c.glob, s)
			}
		}
	}
	_, err := GlobRegexp("IDLE[0-9")
	if want := `idle-task pattern "IDLE[0-9": expected ] to close the [ at column 5, found the end of the pattern`; err == nil || err.Error() != want {
		t.Errorf("error %v, want %s", err, want)
	}
}
