#!/usr/sbin/dtrace -s
/*
 * syscalls.d: every system call's entry and return, printed as traceduck
 * event lines (ingest/dtrace/README.md, "Event output"). traceduck pairs
 * each return with its thread's entry: the call's latency is the length
 * of its state interval (state = the call's name).
 *
 * Usage (Ctrl-C to stop; several scripts may run together):
 *
 *   dtrace -s syscalls.d -o syscalls.out
 *   dtrace -s syscalls.d -c ./app -o app.out     (stops when app exits)
 *   traceduck ingest --db run.duckdb --format dtrace syscalls.out
 *
 * dtrace's own system calls are left out (pid != $pid). On a busy system
 * this prints a great many lines: add a predicate such as
 * /pid == $target/ to trace one program, and watch for
 * "dtrace: N drops" (raise bufsize, switchrate).
 *
 * entry: arg0 is the call's first argument. return: arg0 is the value it
 * returned (-1 on failure), errno its error (0 on success).
 *
 * See sched.d for the temporal option and the header's timestamps.
 */

#pragma D option quiet
#pragma D option temporal
#pragma D option switchrate=10hz
#pragma D option bufsize=16m

BEGIN
{
	printf("#traceduck-events 1 unit=ns script=syscalls.d walltimestamp=%u timestamp=%u timestamp cpu pid tid probe\n",
	    walltimestamp, timestamp);
}

syscall:::entry
/pid != $pid/
{
	printf("%u %d %d %d %s:%s:%s:%s arg0=%d execname=\"%s\"\n",
	    timestamp, cpu, pid, tid, probeprov, probemod, probefunc, probename,
	    arg0, execname);
}

syscall:::return
/pid != $pid/
{
	printf("%u %d %d %d %s:%s:%s:%s ret=%d errno=%d execname=\"%s\"\n",
	    timestamp, cpu, pid, tid, probeprov, probemod, probefunc, probename,
	    arg0, errno, execname);
}
