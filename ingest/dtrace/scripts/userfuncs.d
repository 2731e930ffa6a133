#!/usr/sbin/dtrace -s
/*
 * userfuncs.d: entry and return of every function of one module of a
 * program (the pid provider), printed as traceduck event lines
 * (ingest/dtrace/README.md, "Event output"). traceduck pairs each return
 * with its thread's entry: a call's duration is the length of its state
 * interval (state = the function, instance = its nesting depth).
 *
 * Usage: the program to run (or -p PID), then the module, a pattern:
 *
 *   dtrace -c './app arg' -s userfuncs.d 'libc.so*' -o app.out
 *   dtrace -p 1234 -s userfuncs.d app -o app.out
 *   traceduck ingest --db run.duckdb --format dtrace app.out
 *
 * The provider prints as pid1234; traceduck's events.class is "pid". A
 * return's arg1 is the value the function returned. Functions that
 * return by a tail call may have no return of their own: traceduck then
 * cuts their interval at their caller's return (a diagnostic says so).
 *
 * See sched.d for the temporal option and the header's timestamps.
 */

#pragma D option quiet
#pragma D option temporal
#pragma D option switchrate=10hz
#pragma D option bufsize=16m

BEGIN
{
	printf("#traceduck-events 1 unit=ns script=userfuncs.d walltimestamp=%u timestamp=%u timestamp cpu pid tid probe\n",
	    walltimestamp, timestamp);
}

pid$target:$1::entry
{
	printf("%u %d %d %d %s:%s:%s:%s execname=\"%s\"\n",
	    timestamp, cpu, pid, tid, probeprov, probemod, probefunc, probename,
	    execname);
}

pid$target:$1::return
{
	printf("%u %d %d %d %s:%s:%s:%s ret=%d execname=\"%s\"\n",
	    timestamp, cpu, pid, tid, probeprov, probemod, probefunc, probename,
	    arg1, execname);
}
