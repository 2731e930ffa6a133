-- service_calls: each call a task or handler made, from the behavior that
-- entered it to the one that left it (TLV's TOPPERS rules: a resource's
-- enterSVC(name, args) ... leaveSVC(name, ercd)), in every format whose
-- behaviors come in such pairs. A call is an event enter<X> (X not
-- empty: "enterSVC") whose first argument is the call's name; it ends at
-- the same object's next enter<X> or leave<X> event when that is a
-- leave<X> of the same name. Calls do not nest within one object (a task
-- is in one service call at a time). An enter that no such leave follows
-- (ext_tsk, a call still open at the end of the trace) has leave_ts NULL;
-- a leave that no such enter precedes (its call began before the trace,
-- or its enter went to another object) has enter_ts NULL. Behaviors
-- without arguments (TLV's handler enter() / leave()) are no calls.
-- Columns: run_id, object_id, object (its name), call (the name),
-- enter_ts, leave_ts, dur (ns; NULL when an end is missing; below 0 when
-- the log's clock goes back: asp_short.log's unl_cpu), enter_args,
-- leave_args (the behaviors' args, JSON: TOPPERS
-- {"name":"dly_tsk","args":"dlytim=10."} and {"name":"dly_tsk","args":"ercd=0."}),
-- enter_seq, leave_seq (the events), cpu (the enter's processor, else the
-- leave's).
-- Example: SELECT object, call, count(*), max(dur) FROM service_calls WHERE dur IS NOT NULL GROUP BY ALL ORDER BY ALL
CREATE OR REPLACE VIEW service_calls AS
WITH b AS (
    SELECT run_id, seq, ts, cpu, object_id, args,
           substr(event, 6) AS what,
           starts_with(event, 'enter') AS is_enter,
           json_extract_string(args, '$."' || json_keys(args)[1] || '"') AS call
    FROM events
    WHERE (event LIKE 'enter_%' OR event LIKE 'leave_%') AND object_id IS NOT NULL
      AND args IS NOT NULL AND args <> '{}'
), n AS (
    SELECT *,
           lead(is_enter) OVER w AS next_enter, lead(call) OVER w AS next_call,
           lead(ts) OVER w AS next_ts, lead(seq) OVER w AS next_seq,
           lead(args) OVER w AS next_args, lead(cpu) OVER w AS next_cpu,
           lag(is_enter) OVER w AS prev_enter, lag(call) OVER w AS prev_call
    FROM b
    WHERE call IS NOT NULL
    WINDOW w AS (PARTITION BY run_id, object_id, what ORDER BY seq)
)
SELECT n.run_id, n.object_id, o.name AS object, n.call,
       CASE WHEN n.is_enter THEN n.ts END AS enter_ts,
       CASE WHEN n.is_enter THEN (CASE WHEN paired THEN n.next_ts END) ELSE n.ts END AS leave_ts,
       CASE WHEN n.is_enter AND paired THEN n.next_ts - n.ts END AS dur,
       CASE WHEN n.is_enter THEN n.args END AS enter_args,
       CASE WHEN n.is_enter THEN (CASE WHEN paired THEN n.next_args END) ELSE n.args END AS leave_args,
       CASE WHEN n.is_enter THEN n.seq END AS enter_seq,
       CASE WHEN n.is_enter THEN (CASE WHEN paired THEN n.next_seq END) ELSE n.seq END AS leave_seq,
       coalesce(n.cpu, CASE WHEN paired THEN n.next_cpu END) AS cpu
FROM (SELECT *, is_enter AND next_enter IS NOT NULL AND NOT next_enter AND next_call = call AS paired,
             NOT is_enter AND (prev_enter IS NULL OR NOT prev_enter OR prev_call <> call) AS orphan
      FROM n) n
JOIN objects o ON o.run_id = n.run_id AND o.object_id = n.object_id
WHERE n.is_enter OR n.orphan;
