package report

import (
	"context"
	"database/sql"
	"fmt"
	"path"
	"strings"

	"github.com/traceduck/traceduck/queries"
)

// HistSpec is a --hist request: the distribution of one latency in every
// run, as a histogram of power-of-two buckets (DTrace's quantize).
type HistSpec struct {
	Spec   string `json:"spec"`
	What   string `json:"what"`   // one of histSources
	Object string `json:"object"` // glob on the object's name; "" every object
}

// histSources are the latencies --hist knows, each a query of (run_id,
// object, v) in ns.
var histSources = []struct{ name, sql string }{
	{"response", "SELECT run_id, object, response AS v FROM task_instances WHERE NOT truncated"},
	{"start_delay", "SELECT run_id, object, start_delay AS v FROM task_instances WHERE NOT truncated AND start_delay IS NOT NULL"},
	{"sched_latency", "SELECT run_id, object, latency AS v FROM sched_latency WHERE NOT truncated"},
	{"running", "SELECT run_id, object, dur AS v FROM sched_intervals WHERE class = 'running' AND NOT truncated"},
	{"ready", "SELECT run_id, object, dur AS v FROM sched_intervals WHERE class = 'ready' AND NOT truncated"},
	{"waiting", "SELECT run_id, object, dur AS v FROM sched_intervals WHERE class = 'waiting' AND NOT truncated"},
	{"blocked", "SELECT run_id, object, dur AS v FROM sched_intervals WHERE class = 'blocked' AND NOT truncated"},
}

// ParseHistSpec reads WHAT[:OBJECT]: WHAT is response, start_delay,
// sched_latency (task_instances, sched_latency) or a scheduling class
// (running, ready, waiting, blocked: the durations of its intervals);
// OBJECT a glob on the object's name.
func ParseHistSpec(spec string) (HistSpec, error) {
	what, object, _ := strings.Cut(spec, ":")
	h := HistSpec{Spec: spec, What: strings.TrimSpace(what), Object: strings.TrimSpace(object)}
	var names []string
	ok := false
	for _, s := range histSources {
		names = append(names, s.name)
		ok = ok || s.name == h.What
	}
	if !ok {
		return h, fmt.Errorf("--hist %q: expected %s, found %q", spec, strings.Join(names, ", "), h.What)
	}
	if _, err := path.Match(h.Object, ""); err != nil {
		return h, fmt.Errorf("--hist %q: expected a glob (*, ?, [a-z]) after the colon, found %q", spec, h.Object)
	}
	return h, nil
}

// Hist is a histogram of one latency in every run that has it.
type Hist struct {
	HistSpec
	Runs []HistRun `json:"runs"`
}

// HistRun is one run's histogram: the count of each bucket, a bucket
// named by its lower edge in ns (the next bucket's edge is twice it; 0
// holds 0).
type HistRun struct {
	RunID   int32      `json:"run_id"`
	Total   int64      `json:"total"`
	Buckets [][2]int64 `json:"buckets"` // [lower edge ns, count]
}

func loadHist(ctx context.Context, conn *sql.Conn, h HistSpec, ids string) (Hist, error) {
	var src string
	for _, s := range histSources {
		if s.name == h.What {
			src = s.sql
		}
	}
	where := ""
	if h.Object != "" {
		where = " AND regexp_full_match(object, glob_regex(" + queries.Literal(h.Object) + "))" // linear, as GLOB is not
	}
	rows, err := conn.QueryContext(ctx, `SELECT run_id, quantize_bucket_int(v) AS b, count(*)
FROM (`+src+`) WHERE run_id IN `+ids+where+`
GROUP BY run_id, b ORDER BY run_id, b`)
	if err != nil {
		return Hist{}, fmt.Errorf("report: --hist %s: %w", h.Spec, err)
	}
	defer rows.Close()
	out := Hist{HistSpec: h, Runs: []HistRun{}}
	at := map[int32]int{}
	for rows.Next() {
		var id int32
		var b, n int64
		if err := rows.Scan(&id, &b, &n); err != nil {
			return Hist{}, err
		}
		i, ok := at[id]
		if !ok {
			i = len(out.Runs)
			at[id] = i
			out.Runs = append(out.Runs, HistRun{RunID: id})
		}
		out.Runs[i].Buckets = append(out.Runs[i].Buckets, [2]int64{b, n})
		out.Runs[i].Total += n
	}
	return out, rows.Err()
}
