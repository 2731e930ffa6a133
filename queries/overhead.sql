-- The tracing-overhead model of ../shared/seeds/dtrace-performance-model.zh.txt
-- (Tao, Yang: "Performance Model of Dynamic Tracing System"), as tables of
-- parameters and views over them. docs/overhead-model.md explains it.
--
-- The parameter tables are reference data, not run data: they are created
-- here, empty, in every database, and never dropped or filled by
-- installing the queries (a user's own parameters survive it).
-- `traceduck overhead` (queries.OverheadParams.Load) replaces their
-- contents in one transaction with the bundled queries/overhead/*.tsv or
-- the user's. Every view below gives rows with NULL costs, never an error,
-- while they are empty.

-- overhead_items: cycles of the parts of a predicate or action list
-- (tables 1, 2 and 4: DIF instruction classes, built-in variables,
-- subroutines, actions, aggregations). NULL cycles: no number in the paper.
CREATE TABLE IF NOT EXISTS overhead_items (
    item VARCHAR, kind VARCHAR, cycles DOUBLE, spread DOUBLE, mnemonics VARCHAR,
    paper_table VARCHAR, paper_row VARCHAR);

-- overhead_providers: cycles of each stage of a firing, per provider
-- (table 6); NULL stages do not exist. context: sys or usr.
CREATE TABLE IF NOT EXISTS overhead_providers (
    provider VARCHAR, stage1 DOUBLE, stage2 DOUBLE, stage4 DOUBLE, stage5 DOUBLE,
    context VARCHAR, paper_row VARCHAR, note VARCHAR);

-- overhead_constants: DVM and ECB preparation, refresh costs, bandwidth,
-- context switch, the measuring machine's clock (section 3.4, tables 3, 5).
CREATE TABLE IF NOT EXISTS overhead_constants (
    name VARCHAR, value DOUBLE, unit VARCHAR, paper_table VARCHAR, paper_row VARCHAR, note VARCHAR);

-- overhead_refresh: the consumer side of a session per trace format (R,
-- bytes copied per refresh, aggregations, chew&print, a fixed Cost_C).
CREATE TABLE IF NOT EXISTS overhead_refresh (
    format VARCHAR, refresh_hz DOUBLE, datasize_bytes DOUBLE, aggregations BOOLEAN,
    chew_us DOUBLE, cost_c_us DOUBLE, note VARCHAR);

-- probe_costs: what one event of a run cost to trace, per (format, class,
-- event) glob patterns: a probe of a provider with ECBs, or fixed cycles.
CREATE TABLE IF NOT EXISTS probe_costs (
    format VARCHAR, class VARCHAR, event VARCHAR, provider VARCHAR, ecbs INTEGER,
    pred VARCHAR, prob DOUBLE, action VARCHAR, cycles DOUBLE, context VARCHAR, note VARCHAR);

-- overhead_spec_sessions, overhead_spec_probes, overhead_spec_ecbs: tracing
-- sessions described by a probe spec file (traceduck overhead --spec):
-- the session's refresh settings, its probes with their firing rates, and
-- each probe's ECBs (count identical ECBs per row).
CREATE TABLE IF NOT EXISTS overhead_spec_sessions (
    session VARCHAR, refresh_hz DOUBLE, datasize_bytes DOUBLE, aggregations BOOLEAN,
    chew_us DOUBLE, cost_c_us DOUBLE);
CREATE TABLE IF NOT EXISTS overhead_spec_probes (
    session VARCHAR, probe VARCHAR, provider VARCHAR, rate_hz DOUBLE, cycles DOUBLE, context VARCHAR);
CREATE TABLE IF NOT EXISTS overhead_spec_ecbs (
    session VARCHAR, probe VARCHAR, ecb INTEGER, count INTEGER, pred VARCHAR, prob DOUBLE, action VARCHAR);
-- A spec probe's spreads (the error band): cycles_spread, the largest
-- deviation of its given cycles (spread=), and rate_spread_hz, of its rate
-- (rate_spread=). Added to databases made before they existed.
ALTER TABLE overhead_spec_probes ADD COLUMN IF NOT EXISTS cycles_spread DOUBLE;
ALTER TABLE overhead_spec_probes ADD COLUMN IF NOT EXISTS rate_spread_hz DOUBLE;

-- overhead_measured: the overhead measured on the system, per spec session
-- (run_sha256 NULL; a spec's measured line) or traced file (traceduck
-- overhead --measured FILE; run_sha256 is the sha256 of the run's trace,
-- runs.sha256, so that the measurement follows the run when a dataset
-- renumbers it, and holds for every run of the same file; session is
-- the run's name then), in percent of one CPU: sys and usr when measured
-- apart, total_pct always (sys + usr, or the single figure measured).
-- source says where the figure comes from (the file and line). Reference
-- data like the parameters: no run_id column.
CREATE TABLE IF NOT EXISTS overhead_measured (
    session VARCHAR, run_sha256 VARCHAR, sys_pct DOUBLE, usr_pct DOUBLE, total_pct DOUBLE, source VARCHAR);

-- The macros' subqueries name their tables ovc, ovp, ovi, ovt, ovx: a
-- macro's body is pasted into the caller's query, where a short alias
-- (p, c, ...) could capture the caller's columns.

-- overhead_param: overhead_param(name) is one value of overhead_constants
-- (NULL when absent).
CREATE OR REPLACE MACRO overhead_param(param_name) AS
    (SELECT max(ovc.value) FROM overhead_constants ovc WHERE ovc.name = param_name);

-- overhead_cycles: overhead_cycles(comp) is the cycles of one execution of a DIFO or action list
-- written as NAME[:COUNT][@CYCLES] items joined by '+' (expressions (2) and
-- (3): the sum over its instructions, built-in variables, subroutines,
-- aggregations and actions). @CYCLES prices an item the paper leaves
-- open. Empty or NULL: 0. NULL when an item has no price.
CREATE OR REPLACE MACRO overhead_cycles(comp) AS
    CASE WHEN comp IS NULL OR trim(comp) = '' THEN 0.0 ELSE (
        SELECT CASE WHEN bool_and(ovx.cycles IS NOT NULL) THEN sum(ovx.n * ovx.cycles) END
        FROM (
            SELECT coalesce(TRY_CAST(nullif(regexp_extract(ovt.tok, ':([0-9.]+)', 1), '') AS DOUBLE), 1) AS n,
                   coalesce(TRY_CAST(nullif(regexp_extract(ovt.tok, '@([0-9.]+)', 1), '') AS DOUBLE),
                            (SELECT max(ovi.cycles) FROM overhead_items ovi
                             WHERE ovi.item = regexp_extract(ovt.tok, '^([^:@]*)', 1))) AS cycles
            FROM (SELECT trim(unnest(string_split(comp, '+'))) AS tok) ovt
        ) ovx)
    END;

-- overhead_cycles_spread: overhead_cycles_spread(comp) is the largest deviation of
-- overhead_cycles(comp): the sum of COUNT x each item's spread (the
-- paper's n of m±n; 0 for an item the paper gives without one, and for an
-- item priced with @CYCLES). Empty or NULL: 0. NULL when an item has no
-- price, as overhead_cycles. Worst case: every item off by its whole
-- spread in the same direction (docs/overhead-model.md, "Error band").
CREATE OR REPLACE MACRO overhead_cycles_spread(comp) AS
    CASE WHEN comp IS NULL OR trim(comp) = '' THEN 0.0 ELSE (
        SELECT CASE WHEN bool_and(ovx.cycles IS NOT NULL) THEN sum(ovx.n * ovx.spread) END
        FROM (
            SELECT coalesce(TRY_CAST(nullif(regexp_extract(ovt.tok, ':([0-9.]+)', 1), '') AS DOUBLE), 1) AS n,
                   coalesce(TRY_CAST(nullif(regexp_extract(ovt.tok, '@([0-9.]+)', 1), '') AS DOUBLE),
                            (SELECT max(ovi.cycles) FROM overhead_items ovi
                             WHERE ovi.item = regexp_extract(ovt.tok, '^([^:@]*)', 1))) AS cycles,
                   CASE WHEN regexp_extract(ovt.tok, '@([0-9.]+)', 1) <> '' THEN 0.0 ELSE
                       coalesce((SELECT max(ovi.spread) FROM overhead_items ovi
                                 WHERE ovi.item = regexp_extract(ovt.tok, '^([^:@]*)', 1)), 0.0) END AS spread
            FROM (SELECT trim(unnest(string_split(comp, '+'))) AS tok) ovt
        ) ovx)
    END;

-- overhead_flow: overhead_flow(provider, ecbs) is expression (1), the cycles of a firing
-- outside predicates and actions: the provider's stages, the D virtual
-- machine's preparation and each ECB's. NULL for an unknown provider.
CREATE OR REPLACE MACRO overhead_flow(prov, ecbs) AS
    (SELECT coalesce(ovp.stage1, 0) + coalesce(ovp.stage2, 0) + coalesce(ovp.stage4, 0) + coalesce(ovp.stage5, 0)
     FROM overhead_providers ovp WHERE ovp.provider = prov)
    + overhead_param('dvm_prepare') + ecbs * overhead_param('ecb_prepare');

-- overhead_glob_rank: overhead_glob_rank(pattern) is how specific a probe_costs pattern is: its
-- characters other than '*', a [...] class counting as one.
CREATE OR REPLACE MACRO overhead_glob_rank(pattern) AS
    length(regexp_replace(regexp_replace(pattern, '\[[^\]]*\]', '.', 'g'), '\*', '', 'g'));

-- overhead_spec_probe_costs: per probe of a spec session, expression (4):
-- the cycles of one firing = flow (1) + the sum over its ECBs of the
-- predicate (2) + truth probability x action list (3); the probe's own
-- cycles when the spec gives them. ecb_cycles is that sum.
-- cycles_spread is the largest deviation of cycles: the ECBs' items'
-- spreads through (2)-(4) (table 6 and the DVM and ECB preparation have
-- none), or the spec's spread= with its cycles=; rate_spread_hz the
-- spec's rate_spread= (0 when not given).
CREATE OR REPLACE VIEW overhead_spec_probe_costs AS
WITH e AS (
    SELECT session, probe, sum(count) AS ecbs,
           CASE WHEN bool_and(x IS NOT NULL) THEN sum(count * x) END AS ecb_cycles,
           CASE WHEN bool_and(dx IS NOT NULL) THEN sum(count * dx) END AS ecb_spread
    FROM (SELECT session, probe, count,
                 overhead_cycles(pred) + CASE WHEN coalesce(trim(pred), '') = '' THEN 1.0 ELSE prob END
                                         * overhead_cycles(action) AS x,
                 overhead_cycles_spread(pred) + CASE WHEN coalesce(trim(pred), '') = '' THEN 1.0 ELSE prob END
                                         * overhead_cycles_spread(action) AS dx
          FROM overhead_spec_ecbs)
    GROUP BY session, probe)
SELECT p.session, p.probe, p.provider,
       coalesce(p.context, pr.context) AS context,
       p.rate_hz,
       coalesce(e.ecbs, 0) AS ecbs,
       CASE WHEN p.cycles IS NULL THEN overhead_flow(p.provider, coalesce(e.ecbs, 0)) END AS flow_cycles,
       CASE WHEN p.cycles IS NULL THEN coalesce(e.ecb_cycles, 0) END AS ecb_cycles,
       coalesce(p.cycles, overhead_flow(p.provider, coalesce(e.ecbs, 0)) + coalesce(e.ecb_cycles, 0)) AS cycles,
       CASE WHEN p.cycles IS NOT NULL THEN coalesce(p.cycles_spread, 0) ELSE coalesce(e.ecb_spread, 0) END AS cycles_spread,
       coalesce(p.rate_spread_hz, 0) AS rate_spread_hz
FROM overhead_spec_probes p
LEFT JOIN e ON e.session = p.session AND e.probe = p.probe
LEFT JOIN overhead_providers pr ON pr.provider = p.provider;

-- overhead_run_probe_costs: per run and (class, event), the events taken
-- as probe firings: their rate over the run's duration (first to last
-- event) and the cycles of one, from the most specific probe_costs row
-- (exact format, then class, then event, then the more specific pattern).
-- rate_hz is NULL for a run of no duration; cost_row names the row used.
-- cycles_spread is the largest deviation of cycles from the row's
-- compositions' items (0 for a row of fixed cycles); rate_spread_hz is 0:
-- a run's rate is counted, not estimated.
CREATE OR REPLACE VIEW overhead_run_probe_costs AS
WITH counts AS (
    SELECT e.run_id, coalesce(e.class, '') AS class, coalesce(e.event, '') AS event, count(*) AS firings
    FROM events e GROUP BY ALL),
matched AS (
    SELECT c.run_id, c.class, c.event, c.firings,
           CASE WHEN r.last_ts > r.first_ts THEN (r.last_ts - r.first_ts) / 1e9 END AS duration_s,
           pc.format AS cost_format, pc.class AS cost_class, pc.event AS cost_event,
           pc.provider, pc.ecbs, pc.pred, pc.prob, pc.action, pc.cycles AS fixed_cycles,
           coalesce(pc.context, pr.context, 'sys') AS context
    FROM counts c
    JOIN runs r ON r.run_id = c.run_id
    LEFT JOIN probe_costs pc
      ON (pc.format = r.format OR r.format GLOB pc.format)
     AND (pc.class = c.class OR c.class GLOB pc.class)
     AND (pc.event = c.event OR c.event GLOB pc.event)
    LEFT JOIN overhead_providers pr ON pr.provider = pc.provider
    QUALIFY row_number() OVER (
        PARTITION BY c.run_id, c.class, c.event
        ORDER BY (pc.format = r.format) DESC, (pc.class = c.class) DESC, (pc.event = c.event) DESC,
                 overhead_glob_rank(pc.class) DESC, overhead_glob_rank(pc.event) DESC,
                 overhead_glob_rank(pc.format) DESC, pc.format, pc.class, pc.event) = 1)
SELECT run_id, class, event, firings, duration_s, firings / duration_s AS rate_hz,
       provider, context, coalesce(ecbs, 1) AS ecbs,
       CASE WHEN fixed_cycles IS NULL THEN overhead_flow(provider, coalesce(ecbs, 1)) END AS flow_cycles,
       CASE WHEN fixed_cycles IS NULL THEN coalesce(ecbs, 1) * (overhead_cycles(pred)
            + CASE WHEN coalesce(trim(pred), '') = '' THEN 1.0 ELSE prob END * overhead_cycles(action)) END AS ecb_cycles,
       coalesce(fixed_cycles, overhead_flow(provider, coalesce(ecbs, 1)) + coalesce(ecbs, 1) * (overhead_cycles(pred)
            + CASE WHEN coalesce(trim(pred), '') = '' THEN 1.0 ELSE prob END * overhead_cycles(action))) AS cycles,
       cost_format || ' ' || cost_class || ' ' || cost_event AS cost_row,
       CASE WHEN fixed_cycles IS NOT NULL THEN 0.0 ELSE coalesce(ecbs, 1) * (overhead_cycles_spread(pred)
            + CASE WHEN coalesce(trim(pred), '') = '' THEN 1.0 ELSE prob END * overhead_cycles_spread(action)) END AS cycles_spread,
       0.0 AS rate_spread_hz
FROM matched;

-- overhead_probe_costs: the probes of every spec session and every run in
-- one shape: session (spec session or run name), run_id (NULL for a spec),
-- probe (spec probe, or class:event of a run), context (sys or usr),
-- firing rate and the cycles of one firing, with their spreads.
CREATE OR REPLACE VIEW overhead_probe_costs AS
SELECT session, CAST(NULL AS INTEGER) AS run_id, probe, provider, context,
       CAST(NULL AS BIGINT) AS firings, rate_hz, ecbs, flow_cycles, ecb_cycles, cycles, 'spec' AS cost_row,
       cycles_spread, rate_spread_hz
FROM overhead_spec_probe_costs
UNION ALL
SELECT r.name, c.run_id, c.class || ':' || c.event, c.provider, c.context,
       c.firings, c.rate_hz, c.ecbs, c.flow_cycles, c.ecb_cycles, c.cycles, c.cost_row,
       c.cycles_spread, c.rate_spread_hz
FROM overhead_run_probe_costs c JOIN runs r ON r.run_id = c.run_id;

-- overhead_refresh_costs: per spec session and run, the consumer's
-- refresh settings and expression (5)'s parts: co_cycles (status and
-- buffer snapshots, and with aggregations the aggregation snapshot and
-- hash rebuild) and transfer_us (bytes copied / bandwidth, MB = 2^20);
-- csw_us is one process switch. A run's format without an
-- overhead_refresh row has refresh_hz 0: no consumer cost.
CREATE OR REPLACE VIEW overhead_refresh_costs AS
WITH s AS (
    SELECT session, CAST(NULL AS INTEGER) AS run_id, refresh_hz, datasize_bytes, aggregations, chew_us, cost_c_us
    FROM overhead_spec_sessions
    UNION ALL
    SELECT r.name, r.run_id, coalesce(f.refresh_hz, 0), f.datasize_bytes, f.aggregations, f.chew_us, f.cost_c_us
    FROM runs r LEFT JOIN overhead_refresh f ON f.format = r.format)
SELECT session, run_id, refresh_hz, datasize_bytes, coalesce(aggregations, false) AS aggregations,
       overhead_param('status_snapshot') + overhead_param('buf_snapshot')
         + CASE WHEN coalesce(aggregations, false)
                THEN overhead_param('agg_snapshot') + overhead_param('aggbuild') ELSE 0 END AS co_cycles,
       coalesce(datasize_bytes, 0) / (overhead_param('bandwidth') * 1048576) * 1e6 AS transfer_us,
       overhead_param('csw') AS csw_us,
       coalesce(chew_us, 0) AS chew_us,
       cost_c_us
FROM s;

-- overhead_probe_share: overhead_probe_share(cpu_hz) is overhead_probe_costs with each probe's
-- share of one CPU at cpu_hz, in percent: rate x cycles / cpu_hz, and its
-- error band: low_pct with rate and cycles each less its spread (not
-- below 0), high_pct with each plus its spread.
CREATE OR REPLACE MACRO overhead_probe_share(cpu_hz) AS TABLE
SELECT *, rate_hz * cycles / cpu_hz * 100 AS pct,
       greatest(rate_hz - rate_spread_hz, 0) * greatest(cycles - cycles_spread, 0) / cpu_hz * 100 AS low_pct,
       (rate_hz + rate_spread_hz) * (cycles + cycles_spread) / cpu_hz * 100 AS high_pct
FROM overhead_probe_costs;

-- overhead_share: overhead_share(cpu_hz) is, per spec session and run,, the predicted share of
-- one CPU at cpu_hz, in percent (expressions (7), (8)): cost_b_* = the
-- sum of firing rate x cycles per firing, split by context (pid and usdt
-- firings are the traced process's usr time); cost_c = refreshes per
-- second x (co (5) + 2 process switches) in the kernel, or the fixed
-- cost_c_us; cost_a = refreshes x chew&print, the consumer's usr time.
-- sys = cost_b_sys + cost_c, usr = cost_b_usr + cost_a. unpriced counts
-- probes whose cycles or rate are unknown (left out of the sums).
-- low_pct and high_pct bound total_pct: every probe's rate and cycles less
-- (more) their spreads, Cost_C and Cost_A as they are (tables 3 and 5 give
-- no spreads); worst-case interval arithmetic (docs/overhead-model.md).
CREATE OR REPLACE MACRO overhead_share(cpu_hz) AS TABLE
WITH b AS (
    SELECT session, run_id, count(*) AS probes,
           count(*) FILTER (WHERE cycles IS NULL OR rate_hz IS NULL) AS unpriced,
           coalesce(sum(rate_hz * cycles) FILTER (WHERE context = 'usr'), 0) / cpu_hz * 100 AS cost_b_usr_pct,
           coalesce(sum(rate_hz * cycles) FILTER (WHERE context IS DISTINCT FROM 'usr'), 0) / cpu_hz * 100 AS cost_b_sys_pct,
           coalesce(sum(greatest(rate_hz - rate_spread_hz, 0) * greatest(cycles - cycles_spread, 0)), 0) / cpu_hz * 100 AS cost_b_low_pct,
           coalesce(sum((rate_hz + rate_spread_hz) * (cycles + cycles_spread)), 0) / cpu_hz * 100 AS cost_b_high_pct
    FROM overhead_probe_costs GROUP BY session, run_id),
c AS (
    SELECT session, run_id,
           coalesce(cost_c_us, refresh_hz * (co_cycles / cpu_hz * 1e6 + transfer_us + 2 * csw_us)) / 1e4 AS cost_c_pct,
           refresh_hz * chew_us / 1e4 AS cost_a_pct
    FROM overhead_refresh_costs)
SELECT c.session, c.run_id,
       coalesce(b.probes, 0) AS probes, coalesce(b.unpriced, 0) AS unpriced,
       coalesce(b.cost_b_sys_pct, 0) AS cost_b_sys_pct, coalesce(b.cost_b_usr_pct, 0) AS cost_b_usr_pct,
       c.cost_c_pct, c.cost_a_pct,
       coalesce(b.cost_b_sys_pct, 0) + c.cost_c_pct AS sys_pct,
       coalesce(b.cost_b_usr_pct, 0) + c.cost_a_pct AS usr_pct,
       coalesce(b.cost_b_sys_pct, 0) + c.cost_c_pct + coalesce(b.cost_b_usr_pct, 0) + c.cost_a_pct AS total_pct,
       coalesce(b.cost_b_low_pct, 0) + c.cost_c_pct + c.cost_a_pct AS low_pct,
       coalesce(b.cost_b_high_pct, 0) + c.cost_c_pct + c.cost_a_pct AS high_pct
FROM c LEFT JOIN b ON b.session = c.session AND b.run_id IS NOT DISTINCT FROM c.run_id;

-- overhead_vs_measured: overhead_vs_measured(cpu_hz) is overhead_share(cpu_hz) beside what
-- overhead_measured holds for the same spec session or run: predicted_pct
-- (total_pct) with its band (low_pct, high_pct), measured_pct, error_pct =
-- predicted - measured (percentage points; positive: the model predicts
-- more than was measured), rel_error_pct = error / measured x 100,
-- in_band (low <= measured <= high), and the same for sys and usr where
-- they were measured apart. Sessions without a measurement have NULLs.
CREATE OR REPLACE MACRO overhead_vs_measured(cpu_hz) AS TABLE
SELECT s.session, s.run_id, s.total_pct AS predicted_pct, s.low_pct, s.high_pct,
       m.total_pct AS measured_pct,
       s.total_pct - m.total_pct AS error_pct,
       (s.total_pct - m.total_pct) / nullif(m.total_pct, 0) * 100 AS rel_error_pct,
       m.total_pct BETWEEN s.low_pct AND s.high_pct AS in_band,
       s.sys_pct, m.sys_pct AS measured_sys_pct,
       (s.sys_pct - m.sys_pct) / nullif(m.sys_pct, 0) * 100 AS rel_error_sys_pct,
       s.usr_pct, m.usr_pct AS measured_usr_pct,
       (s.usr_pct - m.usr_pct) / nullif(m.usr_pct, 0) * 100 AS rel_error_usr_pct,
       m.source
FROM overhead_share(cpu_hz) s
LEFT JOIN runs ovr ON ovr.run_id = s.run_id
LEFT JOIN overhead_measured m
  ON (s.run_id IS NOT NULL AND m.run_sha256 = ovr.sha256)
  OR (s.run_id IS NULL AND m.run_sha256 IS NULL AND m.session = s.session);
