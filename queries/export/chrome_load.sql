-- chrome_load: the load of each CPU of run $run per window of $window ns
-- (the installed macro cpu_load), the windows that start in [$from, $to).
SELECT cpu, window_start, load
FROM cpu_load($window)
WHERE run_id = $run AND window_start >= $from AND window_start < $to
ORDER BY window_start, cpu
