-- chrome_load: the load of each CPU of run $run per window of $window ns
-- (the installed macro cpu_load, of that run alone), the windows that
-- start in [$from, $to).
SELECT cpu, window_start, load
FROM cpu_load($window, run := $run)
WHERE window_start >= $from AND window_start < $to
ORDER BY window_start, cpu
