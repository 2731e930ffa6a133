-- Histogram buckets: DTrace's quantize(), lquantize() and llquantize()
-- bucketing, and linear and user-edge buckets, as scalar macros.
--
-- Every bucket macro returns the bucket's value: the number DTrace prints
-- in the "value" column of its row, which is the bucket's lower edge. The
-- underflow bucket of lquantize/llquantize/edges ("< lower") has no lower
-- edge and is -9223372036854775808 (the smallest BIGINT), so that buckets
-- sort in DTrace's row order; the overflow bucket (">= upper") is upper.
-- The *_label macros give the text DTrace prints for a bucket. Values are
-- truncated to integers first, as D does when it stores a value.
--
-- Where this departs from DTrace: DTrace's kernel casts an lquantize()
-- value to 32 bits before bucketing, so that a duration of 3 s in ns
-- wraps around; these macros bucket the full 64-bit value (identical for
-- every value that fits in 32 bits).

-- quantize_magnitude: (quantize_magnitude(x)) |x| clamped to [1, 2^62],
-- for a BIGINT x: the number whose largest power of two quantize_bucket
-- takes (a helper of quantize_bucket_int).
CREATE OR REPLACE MACRO quantize_magnitude(x) AS
least(greatest(abs(greatest(x, -4611686018427387904)), 1), 4611686018427387904);

-- pow2_floor: (pow2_floor(m)) the largest power of two <= m, for a BIGINT
-- 1 <= m <= 2^62. floor(log2(m)) in double precision is exact below 2^44
-- but can round up to k for m just below 2^k when m is larger, so m is
-- shifted right by 20 bits first when m >= 2^40 (which keeps its top bit)
-- and the 20 added back. Example: pow2_floor(1000) = 512.
CREATE OR REPLACE MACRO pow2_floor(m) AS
1::BIGINT << (CAST(floor(log2(m >> (20 * CAST(m >= 1099511627776 AS INTEGER)))) AS INTEGER)
              + 20 * CAST(m >= 1099511627776 AS INTEGER));

-- quantize_bucket_int: (quantize_bucket_int(x)) quantize_bucket of a
-- BIGINT x (see quantize_bucket), without branches, which DuckDB
-- evaluates faster than a CASE.
CREATE OR REPLACE MACRO quantize_bucket_int(x) AS
sign(x) * pow2_floor(quantize_magnitude(x));

-- quantize_bucket: (quantize_bucket(v)) the bucket of DTrace's quantize()
-- that the value v falls into, as the value DTrace prints for its row: 0
-- for 0; for v > 0 the largest power of two <= v; for v < 0 the mirror
-- image, -(largest power of two <= -v), so that -5 is in bucket -4 (which
-- holds -4..-7). Beyond ±2^62 everything is in the last bucket, ±2^62.
-- NULL for NULL. Example: SELECT quantize_bucket(1000) -- 512;
-- SELECT quantize_bucket(dur) AS value, count(*) FROM state_intervals
-- WHERE state = 'running' AND NOT truncated GROUP BY ALL ORDER BY 1.
CREATE OR REPLACE MACRO quantize_bucket(v) AS
quantize_bucket_int(CAST(trunc(v) AS BIGINT));

-- lquantize_check: (lquantize_check(lower, upper, step)) NULL when
-- lquantize(v, lower, upper, step) is valid, else DTrace's compiler error
-- for it: lower and upper are 32-bit, step is 1..65535, and
-- (upper - lower) / step, the number of levels, is 1..65535.
-- Example: lquantize_check(0, 100, 0) -- 'lquantize( ) argument #3 must be
-- a non-zero positive integer constant'.
CREATE OR REPLACE MACRO lquantize_check(lower, upper, step) AS
CASE WHEN lower IS NULL OR upper IS NULL OR step IS NULL THEN 'lquantize( ) arguments must not be NULL'
     WHEN lower < -2147483648 OR lower > 2147483647 THEN 'lquantize( ) argument #1 must be a 32-bit quantity'
     WHEN upper < -2147483648 OR upper > 2147483647 THEN 'lquantize( ) argument #2 must be a 32-bit quantity'
     WHEN upper < lower THEN 'lquantize( ) base (argument #1) must be less than limit (argument #2)'
     WHEN step < 1 THEN 'lquantize( ) argument #3 must be a non-zero positive integer constant'
     WHEN step > 65535 THEN 'lquantize( ) argument #3 must be a 16-bit quantity'
     WHEN (upper::BIGINT - lower) // step = 0 THEN 'lquantize( ) step (argument #3) too large: must have at least one quantization level'
     WHEN (upper::BIGINT - lower) // step > 65535 THEN 'lquantize( ) step (argument #3) too small: number of quantization levels must be a 16-bit quantity'
END;

-- lquantize_top: (lquantize_top(lower, upper, step)) where DTrace's
-- lquantize(v, lower, upper, step) overflow bucket starts: lower + levels
-- * step with levels = (upper - lower) / step, which is upper when step
-- divides upper - lower. Example: lquantize_top(0, 95, 10) = 90.
CREATE OR REPLACE MACRO lquantize_top(lower, upper, step) AS
lower::BIGINT + ((upper::BIGINT - lower) // step) * step;

-- lquantize_bucket: (lquantize_bucket(v, lower, upper, step)) the bucket of
-- DTrace's lquantize(v, lower, upper, step): lower + k * step for the
-- level k holding v; -9223372036854775808 for the underflow bucket
-- (v < lower, printed "< lower"); lquantize_top(lower, upper, step) for
-- the overflow bucket (printed ">= upper"). Invalid arguments raise
-- DTrace's compiler error (see lquantize_check). Example:
-- lquantize_bucket(57, 0, 100, 10) = 50; lquantize_bucket(-3, 0, 100, 10) =
-- -9223372036854775808; lquantize_bucket(100, 0, 100, 10) = 100.
CREATE OR REPLACE MACRO lquantize_bucket(v, lower, upper, step) AS
CASE WHEN lquantize_check(lower, upper, step) IS NOT NULL THEN error(lquantize_check(lower, upper, step))
     WHEN trunc(v) < lower THEN CAST(-9223372036854775808 AS BIGINT)
     WHEN trunc(v) >= lquantize_top(lower, upper, step) THEN lquantize_top(lower, upper, step)
     ELSE lower::BIGINT + ((CAST(trunc(v) AS BIGINT) - lower) // step) * step END;

-- lquantize_label: (lquantize_label(b, lower, upper, step)) the text DTrace
-- prints in the value column for the lquantize bucket b (as
-- lquantize_bucket returns it): "< lower", ">= top" or the number.
-- Example: lquantize_label(-9223372036854775808, 0, 100, 10) = '< 0'.
CREATE OR REPLACE MACRO lquantize_label(b, lower, upper, step) AS
CASE WHEN b = -9223372036854775808 THEN '< ' || lower
     WHEN b >= lquantize_top(lower, upper, step) THEN '>= ' || lquantize_top(lower, upper, step)
     ELSE CAST(b AS VARCHAR) END;

-- llquantize_powers: (llquantize_powers(factor, high)) the list [factor^0,
-- factor^1, ..., factor^(h+2)] with h = least(high, 64), exact (HUGEINT),
-- each power saturating at 2^100 so that a huge factor cannot overflow.
-- Element k+1 is factor^k. DuckDB does not fold lambdas into constants:
-- the macros that need the powers for every row take them from a scalar
-- subquery, (SELECT llquantize_ipowers(...)), which DuckDB computes once.
-- Example: llquantize_powers(10, 1) = [1, 10, 100, 1000].
CREATE OR REPLACE MACRO llquantize_powers(factor, high) AS
list_transform(range(least(high, 64) + 3),
    k -> list_reduce(list_transform(range(k + 1), i -> CASE WHEN i = 0 THEN 1::HUGEINT ELSE factor::HUGEINT END),
                     (a, b) -> least(a * b, 1::HUGEINT << 100)));

-- llquantize_check: (llquantize_check(factor, low, high, nsteps)) NULL when
-- llquantize(v, factor, low, high, nsteps) is valid, else DTrace's
-- compiler error for it: every argument is an unsigned 16-bit number,
-- factor >= 2, low < high, factor <= nsteps, factor divides nsteps, nsteps
-- divides a power of factor, and factor^(high+2) fits in 64 bits.
-- Example: llquantize_check(10, 0, 6, 20) IS NULL.
CREATE OR REPLACE MACRO llquantize_check(factor, low, high, nsteps) AS
CASE WHEN factor IS NULL OR low IS NULL OR high IS NULL OR nsteps IS NULL THEN 'llquantize( ) arguments must not be NULL'
     WHEN factor < 0 OR factor > 65535 THEN 'llquantize( ) argument #1 (factor) must be an unsigned 16-bit quantity'
     WHEN low < 0 OR low > 65535 THEN 'llquantize( ) argument #2 (low magnitude) must be an unsigned 16-bit quantity'
     WHEN high < 0 OR high > 65535 THEN 'llquantize( ) argument #3 (high magnitude) must be an unsigned 16-bit quantity'
     WHEN nsteps < 0 OR nsteps > 65535 THEN 'llquantize( ) argument #4 (linear steps per magnitude) must be an unsigned 16-bit quantity'
     WHEN factor < 2 THEN 'llquantize( ) factor (argument #1) must be two or more'
     WHEN low >= high THEN 'llquantize( ) high magnitude (argument #3) must be greater than low magnitude (argument #2)'
     WHEN nsteps < factor THEN 'llquantize( ) factor (argument #1) must be less than or equal to the number of linear steps per magnitude (argument #4)'
     WHEN nsteps % factor <> 0
       OR list_filter(llquantize_powers(factor, 16), p -> p >= nsteps)[1] % nsteps <> 0
       THEN 'llquantize( ) factor (argument #1) must evenly divide the number of steps per magnitude (argument #4), and the number of steps per magnitude must evenly divide a power of the factor'
     WHEN high > 62 OR llquantize_powers(factor, high)[high + 3] >= 18446744073709551616::HUGEINT
       THEN 'llquantize( ) factor (' || factor || ') raised to power of high magnitude (' || high || ') plus 1 overflows 64-bits'
END;

-- llquantize_ipowers: (llquantize_ipowers(factor, high))
-- llquantize_powers(factor, high) as BIGINT[], each power saturating at
-- the largest BIGINT: for valid arguments factor^(high+1), the last power
-- a bucket needs, is below 2^63.
CREATE OR REPLACE MACRO llquantize_ipowers(factor, high) AS
CAST(list_transform(llquantize_powers(factor, high), p -> least(p, 9223372036854775807)) AS BIGINT[]);

-- llquantize_estimate: (llquantize_estimate(x, factor, low, high)) the
-- order of magnitude of x >= 1 from the floating-point logarithm, clamped
-- to [low, high]: one too small or too large when x is next to a power of
-- factor (llquantize_fix corrects it).
CREATE OR REPLACE MACRO llquantize_estimate(x, factor, low, high) AS
least(high, greatest(low, CAST(floor(ln(x) / ln(factor)) AS INTEGER)));

-- llquantize_fix: (llquantize_fix(x, e, p)) the order of magnitude o with
-- p[o+1] <= x < p[o+2] (factor^o <= x < factor^(o+1)), from an estimate e
-- that is off by at most one; p = llquantize_ipowers(factor, high).
CREATE OR REPLACE MACRO llquantize_fix(x, e, p) AS
e - CAST(CAST(p[e + 1] AS BIGINT) > x AS INTEGER) + CAST(CAST(p[e + 2] AS BIGINT) <= x AS INTEGER);

-- llquantize_in_order: (llquantize_in_order(x, o, nsteps, p)) the bucket of
-- x within its order of magnitude o: [factor^o, factor^(o+1)) is cut into
-- steps of factor^(o+1) / min(factor^(o+1), nsteps), as DTrace does, and
-- the bucket is the lower edge of x's step.
CREATE OR REPLACE MACRO llquantize_in_order(x, o, nsteps, p) AS
CAST(p[o + 1] AS BIGINT)
  + ((x - CAST(p[o + 1] AS BIGINT)) // (CAST(p[o + 2] AS BIGINT) // least(CAST(p[o + 2] AS BIGINT), nsteps)))
    * (CAST(p[o + 2] AS BIGINT) // least(CAST(p[o + 2] AS BIGINT), nsteps));

-- llquantize_bucket: (llquantize_bucket(v, factor, low, high, nsteps)) the
-- bucket of DTrace's llquantize(v, factor, low, high, nsteps): for
-- factor^o <= v < factor^(o+1) (low <= o <= high) the order is cut into
-- nsteps - nsteps/factor linear steps (fewer while factor^(o+1) <
-- nsteps: steps of 1) and the bucket is the step's lower edge;
-- -9223372036854775808 for v < factor^low (printed "< factor^low",
-- negative values included); factor^(high+1) for the overflow bucket.
-- Invalid arguments raise DTrace's compiler error (see llquantize_check).
-- hist_llquantize gives the same buckets several times faster for a large
-- relation. Example: llquantize_bucket(37, 10, 0, 1, 20) = 35;
-- llquantize_bucket(2500, 10, 2, 3, 10) = 2000.
CREATE OR REPLACE MACRO llquantize_bucket(v, factor, low, high, nsteps) AS
CASE WHEN (SELECT llquantize_check(factor, low, high, nsteps)) IS NOT NULL THEN error((SELECT llquantize_check(factor, low, high, nsteps)))
     WHEN trunc(v) < (SELECT llquantize_ipowers(factor, high))[low + 1] THEN CAST(-9223372036854775808 AS BIGINT)
     WHEN trunc(v) >= (SELECT llquantize_ipowers(factor, high))[high + 2] THEN (SELECT llquantize_ipowers(factor, high))[high + 2]
     ELSE llquantize_in_order(CAST(trunc(v) AS BIGINT),
            llquantize_fix(CAST(trunc(v) AS BIGINT),
                           llquantize_estimate(CAST(trunc(v) AS BIGINT), factor, low, high),
                           (SELECT llquantize_ipowers(factor, high))),
            nsteps, (SELECT llquantize_ipowers(factor, high))) END;

-- llquantize_label: (llquantize_label(b, factor, low, high, nsteps)) the
-- text DTrace prints for the llquantize bucket b: "< factor^low",
-- ">= factor^(high+1)" or the number. Example:
-- llquantize_label(100, 10, 0, 1, 20) = '>= 100'.
CREATE OR REPLACE MACRO llquantize_label(b, factor, low, high, nsteps) AS
CASE WHEN b = -9223372036854775808 THEN '< ' || (SELECT llquantize_ipowers(factor, high))[low + 1]
     WHEN b >= (SELECT llquantize_ipowers(factor, high))[high + 2] THEN '>= ' || (SELECT llquantize_ipowers(factor, high))[high + 2]
     ELSE CAST(b AS VARCHAR) END;

-- linear_bucket: (linear_bucket(v, lower, width, n)) the bucket of v among
-- n buckets of equal width starting at lower (lquantize without DTrace's
-- 32-bit and 16-bit limits): lower + k * width, -9223372036854775808 below
-- lower, lower + n * width at and above the top. Example:
-- linear_bucket(57, 0, 25, 4) = 50.
CREATE OR REPLACE MACRO linear_bucket(v, lower, width, n) AS
CASE WHEN width IS NULL OR width < 1 OR n IS NULL OR n < 1 THEN error('linear_bucket: width and n must be positive')
     WHEN trunc(v) < lower THEN CAST(-9223372036854775808 AS BIGINT)
     WHEN trunc(v) >= lower::BIGINT + n::BIGINT * width THEN lower::BIGINT + n::BIGINT * width
     ELSE lower::BIGINT + ((CAST(trunc(v) AS BIGINT) - lower) // width) * width END;

-- edges_check: (edges_check(edges)) NULL when edges is a list of at least
-- two distinct BIGINTs in ascending order without NULLs, else what is
-- wrong with it.
CREATE OR REPLACE MACRO edges_check(edges) AS
CASE WHEN edges IS NULL OR len(edges) < 2 THEN 'bucket edges: give at least two edges'
     WHEN len(list_filter(edges, e -> e IS NULL)) > 0 THEN 'bucket edges: an edge is NULL'
     WHEN len(list_distinct(edges)) <> len(edges) OR list_sort(edges) <> edges
       THEN 'bucket edges: ' || CAST(edges AS VARCHAR) || ' are not in strictly ascending order' END;

-- edges_bucket: (edges_bucket(v, edges)) the bucket of v among buckets
-- with the given edges [e0, e1, ..., en] (ascending): the largest edge ei
-- <= v, so ei for [ei, ei+1) and en for v >= en (printed ">= en"), and
-- -9223372036854775808 for v < e0 (printed "< e0"). Example:
-- edges_bucket(50000, [0, 10000, 100000, 1000000]) = 10000.
CREATE OR REPLACE MACRO edges_bucket(v, edges) AS
CASE WHEN (SELECT edges_check(edges)) IS NOT NULL THEN error((SELECT edges_check(edges)))
     WHEN trunc(v) < edges[1] THEN CAST(-9223372036854775808 AS BIGINT)
     ELSE CAST(list_last(list_filter(edges, e -> e <= trunc(v))) AS BIGINT) END;

-- bucket_label: (bucket_label(b, lower, top)) the text of the row of
-- bucket b in a histogram whose underflow bucket is "< lower" and whose
-- overflow bucket starts at top (linear and edge histograms; see
-- lquantize_label and llquantize_label for DTrace's). Example:
-- bucket_label(1000000, 0, 1000000) = '>= 1000000'.
CREATE OR REPLACE MACRO bucket_label(b, lower, top) AS
CASE WHEN b = -9223372036854775808 THEN '< ' || lower
     WHEN b >= top THEN '>= ' || top
     ELSE CAST(b AS VARCHAR) END;
