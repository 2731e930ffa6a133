-- clock_aligned: (clock_aligned(ts, offset_ns, drift_ppm, ref_ts)) a time of a run
-- on its system's reference clock, given the run's row of clocks
-- (docs/semantics.md, "Aligned time"): ts + offset_ns + round((ts - ref_ts) *
-- drift_ppm / 1e6); ts itself when the run has no clock (NULL offset).
CREATE OR REPLACE MACRO clock_aligned(ts, offset_ns, drift_ppm, ref_ts) AS
    ts + coalesce(offset_ns, 0) + coalesce(CAST(round((ts - ref_ts) * drift_ppm / 1e6) AS BIGINT), 0);

-- system_events: the events of every run tagged as part of a system (tag
-- system=NAME: runs ingested in one call, or with --system NAME), with the
-- system, the run's name, and the context and main object by name, so that
-- the logs of interacting machines read as one table (Baget tracer, seed
-- 4.4). ts is each run's own time base, as the trace gives it; ts_aligned
-- is ts on the clock of the system's reference run, through the run's row
-- of clocks (traceduck align: estimated from the messages the machines
-- exchanged, or given), ts itself for a run without one.
CREATE OR REPLACE VIEW system_events AS
SELECT r.tags->>'system' AS system, e.run_id, r.name AS run_name, e.seq, e.ts,
       clock_aligned(e.ts, k.offset_ns, k.drift_ppm, k.ref_ts) AS ts_aligned, e.cpu,
       e.class, e.event, c.name AS context, o.name AS object, e.value, e.args
FROM events e
JOIN runs r ON r.run_id = e.run_id
LEFT JOIN clocks k ON k.run_id = e.run_id
LEFT JOIN objects c ON c.run_id = e.run_id AND c.object_id = e.context_id
LEFT JOIN objects o ON o.run_id = e.run_id AND o.object_id = e.object_id
WHERE r.tags->>'system' IS NOT NULL;

-- system_timeline: (system_timeline(name)) the events of one system in the order of the
-- reference clock (ts_aligned; ts while no clock is aligned); events at the
-- same time in run order, then in each run's own order.
CREATE OR REPLACE MACRO system_timeline(name) AS TABLE
SELECT * FROM system_events WHERE system = name ORDER BY ts_aligned, run_id, seq;

-- system_messages: the one-way messages one run of a system sent and
-- another received, paired across the runs: a row of messages with the send
-- and no receive in one run and one with the receive and no send in
-- another, with the same channel name and msg_id, as a description's ids
-- declare them (Baget: the queue of a <message> rule and its id=). Round
-- trips and messages without a channel or an id are not paired across runs
-- (a QNX rcvid or scoid is a number of one machine). Columns: system,
-- channel, msg_id, sender_run, receiver_run, send_ts, receive_ts (each on
-- its own run's clock), send_ts_aligned, receive_ts_aligned (on the
-- reference clock, see system_events), transit_ns = receive_ts_aligned -
-- send_ts_aligned (negative: it reads received before it was sent; the
-- clocks disagree), unambiguous (the only send and the only receipt of
-- that channel and msg_id in the system; traceduck align uses only those).
-- Example: SELECT sender_run, receiver_run, count(*), min(transit_ns) FROM system_messages WHERE system = 'rig' AND unambiguous GROUP BY ALL
CREATE OR REPLACE VIEW system_messages AS
WITH m AS (
    SELECT r.tags->>'system' AS system, m.run_id, ch.name AS chan, m.msg_id, m.send_ts, m.receive_ts
    FROM messages m JOIN runs r ON r.run_id = m.run_id
    LEFT JOIN objects ch ON ch.run_id = m.run_id AND ch.object_id = m.channel_id
    WHERE r.tags->>'system' IS NOT NULL AND m.one_way AND m.msg_id IS NOT NULL AND ch.name IS NOT NULL
      AND (m.send_ts IS NULL) <> (m.receive_ts IS NULL)),
s AS (SELECT system, chan, msg_id, run_id, send_ts AS ts, count(*) OVER (PARTITION BY system, chan, msg_id) AS n
      FROM m WHERE send_ts IS NOT NULL),
v AS (SELECT system, chan, msg_id, run_id, receive_ts AS ts, count(*) OVER (PARTITION BY system, chan, msg_id) AS n
      FROM m WHERE receive_ts IS NOT NULL)
SELECT s.system, s.chan AS channel, s.msg_id, s.run_id AS sender_run, v.run_id AS receiver_run,
       s.ts AS send_ts, v.ts AS receive_ts,
       clock_aligned(s.ts, ks.offset_ns, ks.drift_ppm, ks.ref_ts) AS send_ts_aligned,
       clock_aligned(v.ts, kv.offset_ns, kv.drift_ppm, kv.ref_ts) AS receive_ts_aligned,
       receive_ts_aligned - send_ts_aligned AS transit_ns,
       s.n = 1 AND v.n = 1 AS unambiguous
FROM s JOIN v ON s.system = v.system AND s.chan = v.chan AND s.msg_id = v.msg_id AND s.run_id <> v.run_id
LEFT JOIN clocks ks ON ks.run_id = s.run_id
LEFT JOIN clocks kv ON kv.run_id = v.run_id;
