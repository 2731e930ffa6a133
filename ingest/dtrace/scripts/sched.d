#!/usr/sbin/dtrace -s
/*
 * sched.d: threads going on and off CPU, exec and thread exit, printed as
 * traceduck event lines (ingest/dtrace/README.md, "Event output"):
 *
 *   #traceduck-events 1 unit=ns ... timestamp cpu pid tid probe
 *   TIMESTAMP CPU PID TID PROVIDER:MODULE:FUNCTION:NAME key=value ...
 *
 * Usage (Ctrl-C to stop; several scripts may run together):
 *
 *   dtrace -s sched.d -o sched.out
 *   dtrace -s sched.d -s syscalls.d -s interrupts.d -o system.out
 *   traceduck ingest --db run.duckdb --format dtrace system.out
 *
 * Written for illumos and Solaris: the idle thread is recognized by
 * curthread->t_cpu->cpu_idle_thread, the state a thread leaves the CPU in
 * by curlwpsinfo->pr_state. On FreeBSD and macOS, where the kernel
 * structures differ, drop the idle= key (traceduck then takes pid 0 as
 * the idle thread) and the state= key (the thread's state is then
 * off_cpu).
 *
 * timestamp is the nanosecond clock DTrace records with every probe; it
 * is comparable across CPUs, unlike vtimestamp. walltimestamp and
 * timestamp are printed once, together, in the header, so that a time of
 * day can be computed: walltime = walltimestamp + (ts - timestamp).
 *
 * The temporal option (illumos since 2012, FreeBSD, macOS) makes dtrace
 * print the records of all CPUs in time order; DTrace otherwise prints
 * each CPU's buffer in turn and the lines are out of order across CPUs.
 * On a DTrace without it (Solaris 10), delete that line and sort the
 * event lines by their first column before ingesting them.
 */

#pragma D option quiet
#pragma D option temporal
#pragma D option switchrate=10hz
#pragma D option bufsize=16m

BEGIN
{
	printf("#traceduck-events 1 unit=ns script=sched.d walltimestamp=%u timestamp=%u timestamp cpu pid tid probe\n",
	    walltimestamp, timestamp);
}

/*
 * on-cpu fires in the thread that starts to run (curthread); idle=1 when
 * that is the CPU's idle thread.
 */
sched:::on-cpu
{
	printf("%u %d %d %d %s:%s:%s:%s idle=%d execname=\"%s\"\n",
	    timestamp, cpu, pid, tid, probeprov, probemod, probefunc, probename,
	    curthread == curthread->t_cpu->cpu_idle_thread, execname);
}

/*
 * off-cpu fires in the thread that stops running; state= is what it is
 * then: sleeping (blocked), runnable (preempted, back on a run queue),
 * stopped, zombie, or other.
 */
sched:::off-cpu
{
	printf("%u %d %d %d %s:%s:%s:%s idle=%d state=%s execname=\"%s\"\n",
	    timestamp, cpu, pid, tid, probeprov, probemod, probefunc, probename,
	    curthread == curthread->t_cpu->cpu_idle_thread,
	    curlwpsinfo->pr_state == SSLEEP ? "sleeping" :
	    curlwpsinfo->pr_state == SRUN ? "runnable" :
	    curlwpsinfo->pr_state == SSTOP ? "stopped" :
	    curlwpsinfo->pr_state == SZOMB ? "zombie" : "other",
	    execname);
}

/* exec-success fires in the new program: execname is its name. */
proc:::exec-success
{
	printf("%u %d %d %d %s:%s:%s:%s ppid=%d execname=\"%s\"\n",
	    timestamp, cpu, pid, tid, probeprov, probemod, probefunc, probename,
	    ppid, execname);
}

/* lwp-exit fires in the thread that exits. */
proc:::lwp-exit
{
	printf("%u %d %d %d %s:%s:%s:%s execname=\"%s\"\n",
	    timestamp, cpu, pid, tid, probeprov, probemod, probefunc, probename,
	    execname);
}
