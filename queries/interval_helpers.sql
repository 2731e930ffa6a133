-- Interval helpers. An interval is [start_ts, end_ts): it holds start_ts
-- and not end_ts. A 0 ns interval (start_ts = end_ts: an event taken as an
-- interval, or a state left at the instant it was entered) stands for its
-- instant p and is taken as [p, p + 1 ns) when intervals are compared, so
-- it lies inside [s, e) when s <= p < e, two such meet when equal, and it
-- never lies inside an interval that ends at p. Times are each run's own
-- nanoseconds: intervals of different runs never meet.

-- state_at: (state_at(t)) the state of every object at time t: the
-- state_intervals rows with start_ts <= t < end_ts, with the object's kind
-- and name. Columns: run_id, kind, object_id, object, instance, state,
-- start_ts, end_ts, dur, cpu, truncated. An object with several
-- instances (BTF task instances, a QNX thread's state and its kernel
-- call) has a row per instance in force. For an aggregation level use
-- state_trace(L) with the same condition.
-- Example: SELECT object, state FROM state_at(2500000) WHERE run_id = 1
-- AND kind = 'cpu' (what each core was running at 2.5 ms).
CREATE OR REPLACE MACRO state_at(t) AS TABLE
SELECT s.run_id, o.kind, s.object_id, o.name AS object, s.instance, s.state,
       s.start_ts, s.end_ts, s.dur, s.cpu, s.start_seq, s.end_seq, s.truncated
FROM state_intervals s
JOIN objects o ON o.run_id = s.run_id AND o.object_id = s.object_id
WHERE s.start_ts <= t AND t < s.end_ts;

-- intervals_overlapping: (intervals_overlapping(t1, t2)) the
-- state_intervals rows that overlap the window [t1, t2), with the part
-- inside it. Columns: those of state_at, then clip_start (greatest of
-- start_ts and t1), clip_end (least of end_ts and t2) and clip_dur
-- (clip_end - clip_start: the time spent in the state within the window;
-- summed per object and state it is the window's state breakdown).
-- Example: SELECT object, state, sum(clip_dur) FROM
-- intervals_overlapping(0, 10000000) WHERE run_id = 1 AND kind = 'cpu'
-- GROUP BY ALL (how each core spent its first 10 ms).
CREATE OR REPLACE MACRO intervals_overlapping(t1, t2) AS TABLE
SELECT s.run_id, o.kind, s.object_id, o.name AS object, s.instance, s.state,
       s.start_ts, s.end_ts, s.dur, s.cpu, s.start_seq, s.end_seq, s.truncated,
       greatest(s.start_ts, t1) AS clip_start,
       least(s.end_ts, t2) AS clip_end,
       greatest(least(s.end_ts, t2) - greatest(s.start_ts, t1), 0) AS clip_dur
FROM state_intervals s
JOIN objects o ON o.run_id = s.run_id AND o.object_id = s.object_id
WHERE s.start_ts < t2 AND greatest(s.end_ts, s.start_ts + 1) > t1;

-- interval_intersect: (interval_intersect(a, b)) the intersection of two
-- sets of intervals, a range join: every pair (x of a, y of b) of the same
-- run that share some time, with that shared part. a and b name tables,
-- views or CTEs (as strings) with at least the columns run_id, start_ts
-- and end_ts. Columns: run_id, start_ts, end_ts, dur (the shared part:
-- greatest start, least end), a and b (the two rows, as structs: a.state,
-- b.object). Runs are told apart inside the join key ((run_id << 64) +
-- ts), so DuckDB plans an inequality join (IE_JOIN), not a comparison of
-- every pair of a run; further conditions (same CPU) go in WHERE.
-- Example, which thread was running when each interrupt came (QNX: a
-- thread stays RUNNING while an interrupt handler runs on its CPU; an
-- event is a 0 ns interval):
--   WITH irq AS (SELECT run_id, ts AS start_ts, ts AS end_ts, cpu, seq, object_id
--                FROM events WHERE class = 'INT' AND event = 'INT_ENTR'),
--        running AS (SELECT s.*, o.name AS thread FROM state_intervals s
--                    JOIN objects o USING (run_id, object_id)
--                    WHERE o.kind = 'thread' AND s.state = 'RUNNING')
--   SELECT run_id, a.seq, a.start_ts AS ts, a.cpu, b.thread
--   FROM interval_intersect('irq', 'running')
--   WHERE a.cpu = b.cpu ORDER BY run_id, ts;
CREATE OR REPLACE MACRO interval_intersect(a, b) AS TABLE
SELECT ia.x.run_id AS run_id,
       greatest(ia.x.start_ts, ib.y.start_ts) AS start_ts,
       least(ia.x.end_ts, ib.y.end_ts) AS end_ts,
       least(ia.x.end_ts, ib.y.end_ts) - greatest(ia.x.start_ts, ib.y.start_ts) AS dur,
       ia.x AS a, ib.y AS b
FROM (SELECT x, (x.run_id::HUGEINT << 64) + x.start_ts AS k0,
             (x.run_id::HUGEINT << 64) + greatest(x.end_ts, x.start_ts + 1) AS k1
      FROM (SELECT * FROM query_table(a)) x) ia
JOIN (SELECT y, (y.run_id::HUGEINT << 64) + y.start_ts AS k0,
             (y.run_id::HUGEINT << 64) + greatest(y.end_ts, y.start_ts + 1) AS k1
      FROM (SELECT * FROM query_table(b)) y) ib
  ON ia.k0 < ib.k1 AND ib.k0 < ia.k1;
