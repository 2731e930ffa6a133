#!/usr/sbin/dtrace -s
/*
 * pyfuncs.d: Python function calls from CPython's USDT probes
 * (function-entry, function-return), printed as traceduck event lines
 * (ingest/dtrace/README.md, "Event output"). The func key names the
 * Python function: traceduck's state intervals of the thread are then
 * named by it, instance = nesting depth.
 *
 * Usage (a CPython built with --with-dtrace):
 *
 *   dtrace -c 'python3 app.py' -s pyfuncs.d -o py.out
 *   traceduck ingest --db run.duckdb --format dtrace py.out
 *
 * The probes' arguments (CPython's Include/pydtrace.d): arg0 the file
 * name, arg1 the function name, arg2 the line number. The provider
 * prints as python1234; traceduck's events.class is "python".
 *
 * See sched.d for the temporal option and the header's timestamps.
 */

#pragma D option quiet
#pragma D option temporal
#pragma D option switchrate=10hz
#pragma D option bufsize=16m

BEGIN
{
	printf("#traceduck-events 1 unit=ns script=pyfuncs.d walltimestamp=%u timestamp=%u timestamp cpu pid tid probe\n",
	    walltimestamp, timestamp);
}

python$target:::function-entry,
python$target:::function-return
{
	printf("%u %d %d %d %s:%s:%s:%s func=\"%s\" file=\"%s\" line=%d execname=\"%s\"\n",
	    timestamp, cpu, pid, tid, probeprov, probemod, probefunc, probename,
	    copyinstr(arg1), copyinstr(arg0), arg2, execname);
}
