package queries

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Run is one row of the runs table, as the commands over several runs
// (report, export) list them.
type Run struct {
	ID     int32
	Name   string
	Format string
	Source string
	Tags   map[string]string
}

// SelectRuns returns the runs a selector names, in run_id order. The
// selector is a comma-separated list of items, each of which is
//
//	N        the run with run_id N
//	N-M      the runs with run_id N to M (both included)
//	K=V      the runs tagged K=V at ingest (--tag K=V; system=NAME too)
//	NAME     the runs named NAME (--name at ingest)
//
// An empty selector selects every run. An item that selects no run is an
// error that names it: a selector in a CI script that silently matched
// nothing would compare nothing.
func SelectRuns(ctx context.Context, db *sql.DB, selector string) ([]Run, error) {
	all, err := ListRuns(ctx, db)
	if err != nil {
		return nil, err
	}
	if strings.TrimSpace(selector) == "" {
		return all, nil
	}
	chosen := make(map[int32]bool)
	for i, item := range strings.Split(selector, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			return nil, fmt.Errorf("runs selector %q: item %d is empty", selector, i+1)
		}
		match, err := runMatcher(item)
		if err != nil {
			return nil, fmt.Errorf("runs selector %q: %v", selector, err)
		}
		n := 0
		for _, r := range all {
			if match(r) {
				chosen[r.ID] = true
				n++
			}
		}
		if n == 0 {
			return nil, fmt.Errorf("runs selector %q: %q selects no run (see 'SELECT run_id, name, tags FROM runs')", selector, item)
		}
	}
	var out []Run
	for _, r := range all {
		if chosen[r.ID] {
			out = append(out, r)
		}
	}
	return out, nil
}

// runMatcher compiles one selector item.
// Digits are a run_id (a run named 3 is selected by its tags or run_id),
// and a run_id too large for one is an error that says so, not a name
// that selects no run.
func runMatcher(item string) (func(Run) bool, error) {
	if allDigits(item) {
		id, err := strconv.ParseInt(item, 10, 32)
		if err != nil {
			return nil, fmt.Errorf("run_id %s: expected a run_id of at most %d, found %s", item, math.MaxInt32, item)
		}
		return func(r Run) bool { return int64(r.ID) == id }, nil
	}
	if lo, hi, ok := strings.Cut(item, "-"); ok && allDigits(lo) && allDigits(hi) {
		var ends [2]int64
		for i, s := range []string{lo, hi} {
			n, err := strconv.ParseInt(s, 10, 32)
			if err != nil {
				return nil, fmt.Errorf("range %q: expected run_ids of at most %d, found %s", item, math.MaxInt32, s)
			}
			ends[i] = n
		}
		a, b := ends[0], ends[1]
		if a > b {
			return nil, fmt.Errorf("range %q: expected FIRST-LAST with FIRST <= LAST", item)
		}
		return func(r Run) bool { return int64(r.ID) >= a && int64(r.ID) <= b }, nil
	}
	if k, v, ok := strings.Cut(item, "="); ok {
		return func(r Run) bool { tv, has := r.Tags[k]; return has && tv == v }, nil
	}
	return func(r Run) bool { return r.Name == item }, nil
}

// allDigits reports whether s is one or more ASCII digits.
func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

// ListRuns returns every run in run_id order.
func ListRuns(ctx context.Context, db *sql.DB) ([]Run, error) {
	rows, err := db.QueryContext(ctx, `SELECT run_id, coalesce(name, ''), coalesce(format, ''), coalesce(source, ''), coalesce(CAST(tags AS VARCHAR), '{}') FROM runs ORDER BY run_id`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Run
	for rows.Next() {
		var r Run
		var tags string
		var err error
		if err := rows.Scan(&r.ID, &r.Name, &r.Format, &r.Source, &tags); err != nil {
			return nil, err
		}
		if r.Tags, err = ParseTags(tags); err != nil {
			return nil, fmt.Errorf("run %d: tags %s: %v", r.ID, tags, err)
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// ParseTags reads runs.tags: traceduck writes strings, but a database
// edited by hand or by another tool may hold numbers or objects, which are
// kept as their JSON text.
func ParseTags(text string) (map[string]string, error) {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal([]byte(text), &raw); err != nil {
		return nil, err
	}
	tags := make(map[string]string, len(raw))
	for k, v := range raw {
		var s string
		if json.Unmarshal(v, &s) == nil {
			tags[k] = s
		} else {
			tags[k] = string(v)
		}
	}
	return tags, nil
}
