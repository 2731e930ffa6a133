#!/usr/sbin/dtrace -s
/*
 * interrupts.d: device interrupt handlers starting and completing,
 * printed as traceduck event lines (ingest/dtrace/README.md, "Event
 * output"). traceduck shows the interrupt as what its CPU runs while it
 * is handled (nested ones too), and names it by the irq key: the driver
 * and its instance, e.g. e1000g0.
 *
 * Usage (Ctrl-C to stop; several scripts may run together):
 *
 *   dtrace -s sched.d -s interrupts.d -o sched.out
 *
 * illumos and Solaris: the sdt probes interrupt-start and
 * interrupt-complete of av_dispatch_autovect; arg0 is the device's
 * dev_info (0 for a handler without one, left out), read as the
 * DTraceToolkit's intoncpu.d does. The pid and tid are those of the
 * interrupt thread.
 *
 * See sched.d for the temporal option and the header's timestamps.
 */

#pragma D option quiet
#pragma D option temporal
#pragma D option switchrate=10hz
#pragma D option bufsize=16m

BEGIN
{
	printf("#traceduck-events 1 unit=ns script=interrupts.d walltimestamp=%u timestamp=%u timestamp cpu pid tid probe\n",
	    walltimestamp, timestamp);
}

sdt:::interrupt-start,
sdt:::interrupt-complete
/arg0 != 0/
{
	this->devi = (struct dev_info *)arg0;
	printf("%u %d %d %d %s:%s:%s:%s irq=%s%d\n",
	    timestamp, cpu, pid, tid, probeprov, probemod, probefunc, probename,
	    stringof(`devnamesp[this->devi->devi_major].dn_name),
	    this->devi->devi_instance);
}
