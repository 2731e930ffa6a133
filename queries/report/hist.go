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

// histWhats are the latencies --hist knows.
var histWhats = []string{"response", "start_delay", "sched_latency", "running", "ready", "waiting", "blocked"}

// histSources are the queries of the latencies --hist knows, each of
// (run_id, what, object, v), v in ns: the response times and start
// delays of complete task instances, the complete waits for a CPU, and
// the durations of the complete scheduling intervals of each class. Each
// query is one pass over what it reads.
var histSources = []struct {
	whats []string
	sql   string
}{
	{[]string{"response", "start_delay"}, `SELECT run_id, 'response' AS what, object, response AS v FROM task_instances WHERE NOT truncated
UNION ALL SELECT run_id, 'start_delay' AS what, object, start_delay AS v FROM task_instances WHERE NOT truncated AND start_delay IS NOT NULL`},
	{[]string{"sched_latency"}, "SELECT run_id, 'sched_latency' AS what, object, latency AS v FROM sched_latency WHERE NOT truncated"},
	{[]string{"running", "ready", "waiting", "blocked"}, `SELECT run_id, class AS what, object, dur AS v FROM sched_intervals
WHERE class IN ('running', 'ready', 'waiting', 'blocked') AND NOT truncated`},
}

// ParseHistSpec reads WHAT[:OBJECT]: WHAT is response, start_delay,
// sched_latency (task_instances, sched_latency) or a scheduling class
// (running, ready, waiting, blocked: the durations of its intervals);
// OBJECT a glob on the object's name.
func ParseHistSpec(spec string) (HistSpec, error) {
	what, object, _ := strings.Cut(spec, ":")
	h := HistSpec{Spec: spec, What: strings.TrimSpace(what), Object: strings.TrimSpace(object)}
	if !contains(histWhats, h.What) {
		return h, fmt.Errorf("--hist %q: expected %s, found %q", spec, strings.Join(histWhats, ", "), h.What)
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

// histBucketsSQL counts the values of a histogram source (%[2]s) of the
// latencies %[3]s of the runs %[4]s per run, latency, object and
// power-of-two bucket into the table %[1]s (run_id, what, object, bucket,
// count): the rows of report_hist_buckets.
const histBucketsSQL = `INSERT INTO %[1]s
SELECT run_id, what, object, quantize_bucket_int(v) AS b, count(*)
FROM (%[2]s) WHERE what IN %[3]s AND run_id IN %[4]s
GROUP BY run_id, what, object, b`

// computeBuckets counts the values of the latencies whats (nil: every
// one) of the runs ids into the table into.
func computeBuckets(ctx context.Context, conn *sql.Conn, into, ids string, whats []string) error {
	if whats == nil {
		whats = histWhats
	}
	for _, src := range histSources {
		var want []string
		for _, w := range src.whats {
			if contains(whats, w) {
				want = append(want, w)
			}
		}
		if len(want) == 0 {
			continue
		}
		q := fmt.Sprintf(histBucketsSQL, into, src.sql, "("+strings.Join(literals(want), ", ")+")", ids)
		if _, err := conn.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("report: --hist %s: %w", strings.Join(want, ", "), err)
		}
	}
	return nil
}

func literals(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = queries.Literal(s)
	}
	return out
}

// readHist sums the buckets of a histogram's objects per run from the
// summaries' tables (from: a query of report_hist_buckets' columns).
func readHist(ctx context.Context, conn *sql.Conn, h HistSpec, from string) (Hist, error) {
	where := ""
	if h.Object != "" {
		where = " AND regexp_full_match(object, glob_regex(" + queries.Literal(h.Object) + "))" // linear, as GLOB is not
	}
	rows, err := conn.QueryContext(ctx, `SELECT run_id, bucket, sum(count)::BIGINT
FROM (`+from+`) WHERE what = `+queries.Literal(h.What)+where+`
GROUP BY run_id, bucket ORDER BY run_id, bucket`)
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
