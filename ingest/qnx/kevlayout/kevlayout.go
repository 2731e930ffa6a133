// Package kevlayout is the binary layout of a QNX Neutrino .kev record
// and traceprinter's table of how each class and event prints its data
// words: what the .kev reader (ingest/qnx) decodes by, and what the test
// writer (internal/qnxenc) inverts.
package kevlayout

import (
	"strconv"
	"strings"
)

// The binary layout of a .kev record and the way traceprinter prints each
// kind of event. Both the .kev reader (ingest/qnx) and the .kev writer
// (internal/qnxenc) use these tables, so they live here, exported.
//
// Sources, QNX Neutrino 6.4/6.5 public sources:
//   - <sys/trace.h>: traceevent_t is a 32-bit header word and data[3]:
//     data[0] is the low 32 bits of the cycle counter, data[1] and data[2]
//     the event's two data words. Header word: bits 31–30 structure flag
//     (_TRACE_STRUCT_S 0 simple, CB 1 combine begin, CC 2 combine
//     continuation, CE 3 combine end), bits 29–24 CPU
//     (_NTO_TRACE_GETCPU), bits 14–10 internal class (_TRACE_*_C >> 10:
//     EMPTY 0, CONTROL 1, KER_CALL 2, INT 3, PR_TH 4, SYSTEM 5, USER 6,
//     COMM 7), bits 9–0 event (_NTO_TRACE_GETEVENT). Kernel calls: entry =
//     call number, exit = call + _TRACE_MAX_KER_CALL_NUM (128),
//     interrupted = call + 256. PR_TH: thread states = state number,
//     THCREATE = STATE_MAX, THDESTROY = STATE_MAX+1, VTHREAD events offset
//     by _TRACE_MAX_TH_STATE_NUM (STATE_MAX+2), processes (1..5)<<6.
//     INT: 1 entry, 2 exit, 3 handler entry, 4 handler exit. CONTROL: 1
//     TIME, 2 BUFFER. SYSTEM and COMM event numbers as _NTO_TRACE_SYS_* and
//     _NTO_TRACE_COMM_*.
//   - <sys/states.h>: STATE_DEAD 0 … STATE_NET_REPLY 20, STATE_MAX 24.
//   - <sys/kercalls.h>: kernel call numbers __KER_NOP 0 … __KER_BAD 100.
//   - utils/t/traceprinter/traceprinter.c (version 1.02): which arguments
//     each callback prints and how. An argument format is a type letter
//     and a key, optionally prefixed by 'f' ("fast"): a simple event (two
//     data words) prints only the 'f' arguments, a combine event ("wide")
//     prints them all. Type letters: H 32-bit hex "0x%08x", D 32-bit
//     decimal "%d", P pointer "%p" (QNX prints lowercase hex without 0x),
//     X 64-bit hex "0x%llx", E 64-bit decimal "%lld", S the first 4 bytes
//     of a string and s 4 more, N a NUL-terminated name that ends the
//     arguments.

// Internal classes, bits 14–10 of the header word.
const (
	ClassEmpty   = 0
	ClassControl = 1
	ClassKerCall = 2
	ClassInt     = 3
	ClassPrTh    = 4
	ClassSystem  = 5
	ClassUser    = 6
	ClassComm    = 7
)

// NumClasses is how many internal classes there are; the 5-bit field can
// hold more, which are unknown.
const NumClasses = 8

// MaxEvent is the largest event number (10 bits).
const MaxEvent = 0x3ff

// Structure flags, bits 31–30 of the header word.
const (
	StructSimple = 0
	StructBegin  = 1
	StructCont   = 2
	StructEnd    = 3
)

// HeaderWord builds a record's header word.
func HeaderWord(structure, cpu, class, event int) uint32 {
	return uint32(structure&3)<<30 | uint32(cpu&0x3f)<<24 | uint32(class&0x1f)<<10 | uint32(event&MaxEvent)
}

// SplitHeader splits a header word.
func SplitHeader(h uint32) (structure, cpu, class, event int) {
	return int(h >> 30), int(h>>24) & 0x3f, int(h>>10) & 0x1f, int(h & MaxEvent)
}

// Kernel call, thread and process event numbers.
const (
	KerExit      = 128 // _TRACE_MAX_KER_CALL_NUM: exit = call + 128
	KerInterrupt = 256 // interrupted call = call + 256

	StateMax      = 24           // STATE_MAX
	ThCreate      = StateMax     // _TRACE_PR_TH_CREATE_T
	ThDestroy     = StateMax + 1 // _TRACE_PR_TH_DESTROY_T
	MaxThStateNum = StateMax + 2 // _TRACE_MAX_TH_STATE_NUM: VTHREAD offset

	ProcCreate      = 1 << 6
	ProcDestroy     = 2 << 6
	ProcCreateName  = 3 << 6
	ProcDestroyName = 4 << 6
	ProcThreadName  = 5 << 6

	IntEntry        = 1
	IntExit         = 2
	IntHandlerEntry = 3
	IntHandlerExit  = 4

	ControlTime   = 1
	ControlBuffer = 2
)

// ThreadStates are the state names traceprinter prints for the THREAD and
// VTHREAD state events, indexed by <sys/states.h> state number.
var ThreadStates = [...]string{
	"THDEAD", "THRUNNING", "THREADY", "THSTOPPED", "THSEND", "THRECEIVE",
	"THREPLY", "THSTACK", "THWAITTHREAD", "THWAITPAGE", "THSIGSUSPEND",
	"THSIGWAITINFO", "THNANOSLEEP", "THMUTEX", "THCONDVAR", "THJOIN",
	"THINTR", "THSEM", "THWAITCTX", "THNET_SEND", "THNET_REPLY",
}

// PrintKind is which traceprinter callback prints an event.
type PrintKind uint8

const (
	PrintUnknown         PrintKind = iota // no callback: traceprinter prints nothing; traceduck keeps the raw words
	PrintGeneric                          // trace_print: Class:Name then Args
	PrintKerExit                          // trace_print, or "ret_val:-1, errno:N" when the first word is -1
	PrintKerInterrupted                   // "INT_CALL:KER_NAME/N", no fields
	PrintBuffer                           // "CONTROL: BUFFER sequence = N, num_events = M"
	PrintIntEntry                         // "INT_ENTR:0x%08x (%d)       IP:0x%08x"
	PrintIntExit                          // "INT_EXIT:0x%08x (%d) inkernel:0x%08x"
	PrintIntHandlerEntry                  // "INT_HANDLER_ENTR:0x%08x (%d)       PID:%d IP:0x%08x AREA:0x%08x"
	PrintIntHandlerExit                   // "INT_HANDLER_EXIT:0x%08x (%d) SIGEVENT:%s"
	PrintThreadState                      // "THREAD  :%s pid:%d tid:%d " [priority policy [partition [sched_flags]]]
	PrintUser                             // "USREVENT:EVENT:%d, d0:0x%08x d1:0x%08x" or "USREVENT:EVENT:%d STR:"%s""
)

// Printer is how traceprinter prints one class/event code.
type Printer struct {
	Kind      PrintKind
	Class     string   // class token as printed, without traceprinter's padding
	Name      string   // event name as printed, without padding; empty when it depends on the data (INT_*, USREVENT)
	Args      []string // argument formats of PrintGeneric and PrintKerExit, e.g. "fHcoid", "Dsparts", "s"
	ForceWide bool     // print every argument even for a simple event (SYSTEM APS_NAME)
}

// kerCall is one kernel call's traceprinter callbacks: the argument
// formats of its entry and exit events.
type kerCall struct {
	name     string // <sys/kercalls.h> name without __KER_
	exitName string // printed name of the exit event when it differs
	entry    string
	exit     string
}

const (
	twoEmpty = "fHempty fHempty"
	retEmpty = "fHret_val fHempty"
	dRet     = "fDret_val fHempty"
	sigev    = "Devent->sigev_notify Pevent->sigev_notify_function_p Hevent->sigev_value Pevent->sigev_notify_attributes_p"
	msgInfo  = "Dinfo->nd Dinfo->srcnd Dinfo->pid Dinfo->tid Dinfo->chid Dinfo->scoid Dinfo->coid Dinfo->msglen Dinfo->srcmsglen Dinfo->dstmsglen Dinfo->priority Dinfo->flags"
	credInfo = "Dinfo->ruid Dinfo->euid Dinfo->suid Dinfo->rgid Dinfo->egid Dinfo->sgid Dinfo->ngroups Dinfo->grouplist[0] Dinfo->grouplist[1] Dinfo->grouplist[2] Dinfo->grouplist[3] Dinfo->grouplist[4] Dinfo->grouplist[5] Dinfo->grouplist[6] Dinfo->grouplist[7]"
	ssParam  = "Dparam.__ss_low_priority Dparam.__ss_max_repl Dparam.__ss_repl_period.tv_sec Dparam.__ss_repl_period.tv_nsec Dparam.__ss_init_budget.tv_sec Dparam.__ss_init_budget.tv_nsec Dparam.empty Dparam.empty"
	itime    = "Ditime->nsec(nsec) Ditime->interval_nsec(sec) Ditime->interval_nsec(nsec)"
	oitime   = "Doitime->nsec(nsec) Doitime->interval_nsec(sec) Doitime->interval_nsec(nsec)"
)

// kerCalls is indexed by <sys/kercalls.h> call number. The argument
// formats are traceprinter.c's c_ker_*_en and c_ker_*_ex callbacks (the
// __EXT_QNX variants), written down here in traceprinter's own notation.
var kerCalls = [...]kerCall{
	0:  {"NOP", "", "fHdummy fHempty", twoEmpty},
	1:  {"TRACE_EVENT", "", "fHmode fHclass[header] Hevent[time_off] Hdata_1 Hdata_2", retEmpty},
	2:  {"RING0", "", "fPfunc_p fParg_p", retEmpty},
	3:  {"SPARE1", "", twoEmpty, twoEmpty},
	4:  {"SPARE2", "", twoEmpty, twoEmpty},
	5:  {"SPARE3", "", twoEmpty, twoEmpty},
	6:  {"SPARE4", "", twoEmpty, twoEmpty},
	7:  {"SYS_CPUPAGE_GET", "", "fDindex fHempty", retEmpty},
	8:  {"SYS_CPUPAGE_SET", "", "fDindex fHvalue", retEmpty},
	9:  {"SYS_SPARE1", "", twoEmpty, twoEmpty},
	10: {"MSG_CURRENT", "", "fHrcvid fHempty", twoEmpty},
	11: {"MSG_SENDV", "", "fHcoid Dsparts Drparts fSmsg s s", "fDstatus fSrmsg s s"},
	12: {"MSG_SENDVNC", "", "fHcoid Dsparts Drparts fSmsg s s", "fHret_val fSrmsg s s"},
	13: {"MSG_ERROR", "", "fHrcvid fDerr", dRet},
	14: {"MSG_RECEIVEV", "", "fHchid fDrparts", "fHrcvid fSrmsg s s " + msgInfo + " Dinfo->reserved"},
	15: {"MSG_REPLYV", "", "fHrcvid Dsparts fHstatus Ssmsg s s", dRet},
	16: {"MSG_READV", "", "fHrcvid Prmsg_p Drparts fHoffset", "fDrbytes fSrmsg s s"},
	17: {"MSG_WRITEV", "", "fHrcvid Dsparts fHoffset Smsg s s", "fDwbytes fHempty"},
	18: {"MSG_READWRITEV", "", "fHsrc_rcvid fHdst_rcvid", "fDmsglen fHempty"},
	19: {"MSG_INFO", "", "fHrcvid fPinfo_p", "fHret_val f" + msgInfo + " Hempty"},
	20: {"MSG_SEND_PULSE", "", "fHcoid Dpriority fHcode Hvalue", "fDstatus fHempty"},
	21: {"MSG_DELIVER_EVENT", "", "fHrcvid f" + sigev, retEmpty},
	22: {"MSG_KEYDATA", "", "fHrcvid fHop", "fHret_val fDnewkey"},
	23: {"MSG_READIOV", "", "fHrcvid Dparts fHoffset Hflags", "fDrbytes fSrmsg s s"},
	24: {"MSG_RECEIVEPULSEV", "", "fHchid fDrparts", "fHrcvid fSrmsg s s " + msgInfo + " Dinfo->reserved"},
	25: {"MSG_VERIFY_EVENT", "", "fHrcvid f" + sigev, "fDstatus fHempty"},
	26: {"SIGNAL_KILL", "", "Hnd fDpid Dtid fDsigno Hcode Hvalue", dRet},
	27: {"SIGNAL_RETURN", "", "fPs_p fHempty", retEmpty},
	28: {"SIGNAL_FAULT", "", "fDsigcode fPaddr", "fHret_val fHreg_1 Hreg_2 Hreg_3 Hreg_4 Hreg_5"},
	29: {"SIGNAL_ACTION", "", "Dpid Psigstub_p fDsigno fPact->sa_handler_p Hact->sa_flags Hact->sa_mask.bits[0] Hact->sa_mask.bits[1]",
		"fHret_val fPoact->sa_handler_p Hoact->sa_flags Hoact->sa_mask.bits[0] Hoact->sa_mask.bits[1]"},
	30: {"SIGNAL_PROCMASK", "", "fDpid fDtid Hhow Hsig_blocked->bits[0] Hsig_blocked->bits[1]",
		"fDret_val fHold_sig_blocked->bits[0] Hold_sig_blocked->bits[1]"},
	31: {"SIGNAL_SUSPEND", "", "fHsig_blocked->bits[0] fHsig_blocked->bits[1]", "fHret_val fPsig_blocked_p"},
	32: {"SIGNAL_WAITINFO", "", "fHsig_wait->bits[0] fHsig_wait->bits[1]",
		"fDsig_num Dsi_signo fDsi_code Dsi_errno Dp[0] Dp[1] Dp[2] Dp[3] Dp[4] Dp[5] Dp[6]"},
	33: {"SIGNAL_SPARE1", "", twoEmpty, twoEmpty},
	34: {"SIGNAL_SPARE2", "", twoEmpty, twoEmpty},
	35: {"CHANNEL_CREATE", "", "fHflags fHempty", "fHchid fHempty"},
	36: {"CHANNEL_DESTROY", "", "fHchid fHempty", retEmpty},
	37: {"CHANCON_ATTR", "", "fDchid fHflags", "fDchid fHflags"},
	38: {"CHANNEL_SPARE1", "", twoEmpty, twoEmpty},
	39: {"CONNECT_ATTACH", "", "fHnd fDpid Hchid Dindex Hflags", "fHcoid fHempty"},
	40: {"CONNECT_DETACH", "", "fHcoid fHempty", retEmpty},
	41: {"CONNECT_SERVER_INFO", "", "fDpid fHcoid", "fHcoid f" + msgInfo + " Dinfo->reserved"},
	42: {"CONNECT_CLIENT_INFO", "", "fHscoid fDngroups", "fHret_val fDinfo->nd Dinfo->pid Dinfo->sid Hflags " + credInfo},
	43: {"CONNECT_FLAGS", "", "Dpid fHcoid Hmasks fHbits", "fHold_flags fHempty"},
	44: {"CONNECT_SPARE1", "", twoEmpty, twoEmpty},
	45: {"CONNECT_SPARE2", "", twoEmpty, twoEmpty},
	46: {"THREAD_CREATE", "", "Dpid fPfunc_p fParg_p Hflags Dstacksize Pstackaddr_p Pexitfunc_p Dpolicy Dsched_priority Dsched_curpriority " + ssParam + " Dguardsize Dempty Dempty Dempty",
		"fHthread_id fHowner"},
	47: {"THREAD_DESTROY", "", "fDtid Dpriority fPstatus_p", retEmpty},
	48: {"THREAD_DESTROYALL", "", twoEmpty, retEmpty},
	49: {"THREAD_DETACH", "", "fDtid fHempty", retEmpty},
	50: {"THREAD_JOIN", "", "fDtid fPstatus_p", "fHret_val fPstatus_p"},
	51: {"THREAD_CANCEL", "", "fDtid fPcanstub_p", retEmpty},
	52: {"THREAD_CTL", "", "fHcmd fPdata_p", retEmpty},
	53: {"THREAD_SPARE1", "", twoEmpty, twoEmpty},
	54: {"THREAD_SPARE2", "", twoEmpty, twoEmpty},
	55: {"INTERRUPT_ATTACH", "", "fDintr Phandler_p Parea_p Dareasize fHflags", "fHint_fun_id fHempty"},
	56: {"INTERRUPT_DETACH_FUNC", "", "fDintr fPhandler_p", dRet},
	57: {"INTERRUPT_DETACH", "", "fDid fHempty", dRet},
	58: {"INTERRUPT_WAIT", "", "fHflags fDtimeout_tv_sec Dtimeout_tv_nsec", dRet},
	59: {"INTERRUPT_MASK", "", "fDintr fDid", "fHmask_level fHempty"},
	60: {"INTERRUPT_UNMASK", "", "fDintr fDid", "fHmask_level fHempty"},
	61: {"INTERRUPT_SPARE1", "", twoEmpty, twoEmpty},
	62: {"INTERRUPT_SPARE2", "", twoEmpty, twoEmpty},
	63: {"INTERRUPT_SPARE3", "", twoEmpty, twoEmpty},
	64: {"INTERRUPT_SPARE4", "", twoEmpty, twoEmpty},
	65: {"CLOCK_TIME", "", "fDid fDnew(sec) Dnew(nsec)", "fDret_val fDold(sec) Dold(nsec)"},
	66: {"CLOCK_ADJUST", "", "fDid fDnew->tick_count Dnew->tick_nsec_inc", "fDret_val fDold->tick_count Dold->tick_nsec_inc"},
	67: {"CLOCK_PERIOD", "", "fDid fDnew->nsec Dnew->fract", "fDret_val fDold->nsec Dold->fract"},
	68: {"CLOCK_ID", "", "fDpid fDtid", retEmpty},
	69: {"CLOCK_SPARE2", "", twoEmpty, twoEmpty},
	70: {"TIMER_CREATE", "", "fHid f" + sigev, "fHtimer_id fHempty"},
	71: {"TIMER_DESTROY", "", "fHid fHempty", retEmpty},
	72: {"TIMER_SETTIME", "", "fHid Hflags fDitime->nsec(sec) " + itime, "fHret_val fDoitime->nsec(sec) " + oitime},
	73: {"TIMER_INFO", "", "fDpid fHid Hflags Pinfo_p",
		"fDprev_id fDinfo->itime.nsec(sec) Dinfo->itime.nsec(nsec) Dinfo->itime.interval_nsec(sec) Dinfo->itime.interval_nsec(nsec) " +
			"Dinfo->otime.nsec(sec) Dinfo->otime.nsec(nsec) Dinfo->otime.interval_nsec(sec) Dinfo->otime.interval_nsec(nsec) " +
			"Dinfo->flags Dinfo->tid Dinfo->notify Dinfo->clockid Dinfo->overruns Dinfo->event.sigev_notify " +
			"Pinfo->event.sigev_notify_function_p Hinfo->event.sigev_value Pinfo->event.sigev_notify_attributes_p"},
	74:  {"TIMER_ALARM", "", "fHid fDitime->nsec(sec) " + itime, "fHret_val fDoitime->nsec(sec) " + oitime},
	75:  {"TIMER_TIMEOUT", "", "Did fHtimeout_flags fDntime(sec) Dntime(nsec) " + sigev, "fHprev_timeout_flags fDotime(sec) Dotime(nsec)"},
	76:  {"TIMER_SPARE1", "", twoEmpty, twoEmpty},
	77:  {"TIMER_SPARE2", "", twoEmpty, twoEmpty},
	78:  {"SYNC_CREATE", "", "fDtype fPsync_p Dcount Downer Dprotocol Hflags Dprioceiling Dclockid", dRet},
	79:  {"SYNC_DESTROY", "", "fPsync_p Dcount fDowner", dRet},
	80:  {"SYNC_MUTEX_LOCK", "", "fPsync_p Dcount fDowner", dRet},
	81:  {"SYNC_MUTEX_UNLOCK", "", "fPsync_p Dcount fDowner", dRet},
	82:  {"SYNC_CONDVAR_WAIT", "", "fPsync_p fPmutex_p Dsync->count Dsync->owner Dmutex->count Dmutex->owner", dRet},
	83:  {"SYNC_CONDVAR_SIGNAL", "SYNC_CONDVAR_SIG", "fPsync_p fDall Dsync->count Dsync->owner", dRet},
	84:  {"SYNC_SEM_POST", "", "fPsync_p fDcount Downer", retEmpty},
	85:  {"SYNC_SEM_WAIT", "", "fPsync_p Dtry fDcount Downer", dRet},
	86:  {"SYNC_CTL", "", "fDcmd fPsync_p Pdata_p Dcount Downer", dRet},
	87:  {"SYNC_MUTEX_REVIVE", "", "fPsync_p Dcount fDowner", dRet},
	88:  {"SCHED_GET", "", "fDpid fDtid", "fDret_val fDsched_priority Dsched_curpriority " + ssParam},
	89:  {"SCHED_SET", "", "fDpid Dtid Dpolicy fDsched_priority Dsched_curpriority " + ssParam, dRet},
	90:  {"SCHED_YIELD", "", twoEmpty, retEmpty},
	91:  {"SCHED_INFO", "", "fDpid fDpolicy", "fDret_val Dpriority_min fDpriority_max Dinterval_sec Dinterval_nsec Dpriority_priv"},
	92:  {"SCHED_CTL", "", "fHcmd fHempty", twoEmpty},
	93:  {"NET_CRED", "", "fHcoid fPinfo_p", "fDret_val fDinfo->nd Dinfo->pid Dinfo->sid Hinfo->flags " + credInfo},
	94:  {"NET_VTID", "", "fDvtid fPinfo_p Dtid Hcoid Dpriority Dsrcmsglen Hkeydata Dsrcnd Ddstmsglen Dzero", retEmpty},
	95:  {"NET_UNBLOCK", "", "fHvtid fHempty", retEmpty},
	96:  {"NET_INFOSCOID", "", "fHscoid fHinfoscoid", retEmpty},
	97:  {"NET_SIGNAL_KILL", "", "Dcred->ruid Dcred->euid Hnd fDpid Dtid fDsigno Hcode Hvalue", "fDstatus fHempty"},
	98:  {"NET_SPARE1", "", twoEmpty, twoEmpty},
	99:  {"NET_SPARE2", "", twoEmpty, twoEmpty},
	100: {"BAD", "", twoEmpty, retEmpty},
}

// NumKerCalls is how many kernel calls traceprinter knows (__KER_BAD+1).
const NumKerCalls = len(kerCalls)

// generic are the events of the other classes that traceprinter prints
// with trace_print: class token, event name, argument formats.
type generic struct {
	class, event int
	cls, name    string
	args         string
	forceWide    bool
}

var generics = []generic{
	{ClassControl, ControlTime, "CONTROL", "TIME", "fHmsb fHlsb(offset)", false},

	{ClassPrTh, ThCreate, "THREAD", "THCREATE", "fDpid fDtid Dpolicy", false},
	{ClassPrTh, ThDestroy, "THREAD", "THDESTROY", "fDpid fDtid", false},
	{ClassPrTh, MaxThStateNum + ThCreate, "VTHREAD", "VTHCREATE", "fDpid fDtid", false},
	{ClassPrTh, MaxThStateNum + ThDestroy, "VTHREAD", "VTHDESTROY", "fDpid fDtid", false},
	{ClassPrTh, ProcCreate, "PROCESS", "PROCCREATE", "fDppid fDpid", false},
	{ClassPrTh, ProcDestroy, "PROCESS", "PROCDESTROY", "fDppid fDpid", false},
	{ClassPrTh, ProcCreateName, "PROCESS", "PROCCREATE_NAME", "fDppid fDpid Nname", false},
	{ClassPrTh, ProcDestroyName, "PROCESS", "PROCDESTROY_NAME", "fDppid fDpid Nname", false},
	{ClassPrTh, ProcThreadName, "PROCESS", "PROCTHREAD_NAME", "fDpid fDtid Nname", false},

	{ClassSystem, 2, "SYSTEM", "PATHMGR_OPEN", "fDpid fDtid Npath", false},
	{ClassSystem, 3, "SYSTEM", "APS_NAME", "fDpartition_id fNname", true},
	{ClassSystem, 4, "SYSTEM", "APS_NEW_BUDGET", "fDpartition_id fDpercentage_budget Dcritical_budget", false},
	{ClassSystem, 5, "SYSTEM", "APS_BANKRUPTCY", "fDpid fDtid fDpartition_id", false},
	{ClassSystem, 6, "SYSTEM", "MMAP", "fDpid fXvaddr fXlen fHflags Hprot Dfd Xalign Xoffset Npath", false},
	{ClassSystem, 7, "SYSTEM", "MUNMAP", "fDpid fXvaddr fXlen", false},
	{ClassSystem, 8, "SYSTEM", "MAPNAME", "fDpid fHvaddr fHlen Nname", false},
	{ClassSystem, 9, "SYSTEM", "ADDRESS", "fHaddr", false},
	{ClassSystem, 10, "SYSTEM", "FUNC_ENTER", "fHthisfn fHcall_site", false},
	{ClassSystem, 11, "SYSTEM", "FUNC_EXIT", "fHthisfn fHcall_site", false},
	{ClassSystem, 12, "SYSTEM", "SLOG", "fDopcode fDseverity Nmessage", false},

	{ClassComm, 0, "COMM", "SND_MESSAGE", "fHrcvid fDpid", false},
	{ClassComm, 1, "COMM", "SND_PULSE", "fHscoid fDpid", false},
	{ClassComm, 2, "COMM", "REC_MESSAGE", "fHrcvid fDpid", false},
	{ClassComm, 3, "COMM", "REC_PULSE", "fHscoid fDpid", false},
	{ClassComm, 4, "COMM", "SND_PULSE_EXE", "fHscoid fDpid", false},
	{ClassComm, 5, "COMM", "SND_PULSE_DIS", "fHscoid fDpid", false},
	{ClassComm, 6, "COMM", "SND_PULSE_DEA", "fHscoid fDpid", false},
	{ClassComm, 7, "COMM", "SND_PULSE_UN", "fHscoid fDpid", false},
	{ClassComm, 8, "COMM", "SND_PULSE_QUN", "fHscoid fDpid", false},
	{ClassComm, 9, "COMM", "SIGNAL", "fDsi_signo fDsi_code Dsi_errno H__pad[0] H__pad[1] H__pad[2] H__pad[3] H__pad[4] H__pad[5]", false},
	{ClassComm, 10, "COMM", "REPLY_MESSAGE", "fDtid fDpid", false},
	{ClassComm, 11, "COMM", "MSG_ERROR", "fDtid fDpid", false},
}

var (
	printers [NumClasses][MaxEvent + 1]Printer
	codes    = map[[2]string][2]int{} // {class, name} → {class, event}
)

func init() {
	for n, kc := range kerCalls {
		entry := kc.name + "/" + twoDigits(n)
		exitName := kc.name
		if kc.exitName != "" {
			exitName = kc.exitName
		}
		exit := exitName + "/" + twoDigits(n)
		ix := "KER_" + kc.name + "/" + strconv.Itoa(n)
		printers[ClassKerCall][n] = Printer{Kind: PrintGeneric, Class: "KER_CALL", Name: entry, Args: strings.Fields(kc.entry)}
		printers[ClassKerCall][n+KerExit] = Printer{Kind: PrintKerExit, Class: "KER_EXIT", Name: exit, Args: strings.Fields(kc.exit)}
		printers[ClassKerCall][n+KerInterrupt] = Printer{Kind: PrintKerInterrupted, Class: "INT_CALL", Name: ix}
		codes[[2]string{"KER_CALL", entry}] = [2]int{ClassKerCall, n}
		codes[[2]string{"KER_EXIT", exit}] = [2]int{ClassKerCall, n + KerExit}
		codes[[2]string{"INT_CALL", ix}] = [2]int{ClassKerCall, n + KerInterrupt}
	}
	for _, g := range generics {
		printers[g.class][g.event] = Printer{Kind: PrintGeneric, Class: g.cls, Name: g.name, Args: strings.Fields(g.args), ForceWide: g.forceWide}
		codes[[2]string{g.cls, g.name}] = [2]int{g.class, g.event}
	}
	for s, name := range ThreadStates {
		printers[ClassPrTh][s] = Printer{Kind: PrintThreadState, Class: "THREAD", Name: name}
		printers[ClassPrTh][MaxThStateNum+s] = Printer{Kind: PrintGeneric, Class: "VTHREAD", Name: name, Args: []string{"fDpid", "fDtid"}}
		codes[[2]string{"THREAD", name}] = [2]int{ClassPrTh, s}
		codes[[2]string{"VTHREAD", name}] = [2]int{ClassPrTh, MaxThStateNum + s}
	}
	printers[ClassControl][ControlBuffer] = Printer{Kind: PrintBuffer, Class: "CONTROL", Name: "BUFFER"}
	codes[[2]string{"CONTROL", "BUFFER"}] = [2]int{ClassControl, ControlBuffer}
	printers[ClassInt][IntEntry] = Printer{Kind: PrintIntEntry, Class: "INT_ENTR"}
	printers[ClassInt][IntExit] = Printer{Kind: PrintIntExit, Class: "INT_EXIT"}
	printers[ClassInt][IntHandlerEntry] = Printer{Kind: PrintIntHandlerEntry, Class: "INT_HANDLER_ENTR"}
	printers[ClassInt][IntHandlerExit] = Printer{Kind: PrintIntHandlerExit, Class: "INT_HANDLER_EXIT"}
	for ev := 0; ev <= MaxEvent; ev++ {
		printers[ClassUser][ev] = Printer{Kind: PrintUser, Class: "USREVENT"}
	}
}

func twoDigits(n int) string {
	if n < 10 {
		return "0" + strconv.Itoa(n)
	}
	return strconv.Itoa(n)
}

// PrinterOf returns how traceprinter prints an internal class/event; Kind
// is PrintUnknown when it prints nothing for it.
func PrinterOf(class, event int) Printer {
	if class < 0 || class >= NumClasses || event < 0 || event > MaxEvent {
		return Printer{}
	}
	return printers[class][event]
}

// CodeOf returns the internal class and event of an event as printed:
// class token and name. The INT_* classes (whose name is the vector) and
// USREVENT ("EVENT:N") and UNKNOWN events are decoded from the name.
func CodeOf(class, name string) (cls, event int, ok bool) {
	switch class {
	case "INT_ENTR":
		return ClassInt, IntEntry, true
	case "INT_EXIT":
		return ClassInt, IntExit, true
	case "INT_HANDLER_ENTR":
		return ClassInt, IntHandlerEntry, true
	case "INT_HANDLER_EXIT":
		return ClassInt, IntHandlerExit, true
	case "USREVENT":
		n, ok := strings.CutPrefix(name, "EVENT:")
		if !ok {
			return 0, 0, false
		}
		ev, err := strconv.Atoi(n)
		if err != nil || ev < 0 || ev > MaxEvent || strconv.Itoa(ev) != n {
			return 0, 0, false
		}
		return ClassUser, ev, true
	case Unknown:
		return ParseUnknownName(name)
	}
	c, ok := codes[[2]string{class, name}]
	return c[0], c[1], ok
}

// Unknown is the class traceduck gives events traceprinter does not print
// (no callback for their class/event); their name is UnknownName and
// their fields are the data words d0, d1, ... as "0x%08x".
const Unknown = "UNKNOWN"

var classNames = [NumClasses]string{"EMPTY", "CONTROL", "KER_CALL", "INT", "PR_TH", "SYSTEM", "USER", "COMM"}

// UnknownName names an event traceprinter does not print: the internal
// class (its <sys/trace.h> name, or CLASSn above COMM) and the event
// number, e.g. "KER_CALL/120".
func UnknownName(class, event int) string {
	c := "CLASS" + strconv.Itoa(class)
	if class >= 0 && class < NumClasses {
		c = classNames[class]
	}
	return c + "/" + strconv.Itoa(event)
}

// ParseUnknownName is the inverse of UnknownName.
func ParseUnknownName(name string) (class, event int, ok bool) {
	c, e, found := strings.Cut(name, "/")
	if !found {
		return 0, 0, false
	}
	class = -1
	for i, n := range classNames {
		if c == n {
			class = i
		}
	}
	if class < 0 {
		n, ok := strings.CutPrefix(c, "CLASS")
		v, err := strconv.Atoi(n)
		if !ok || err != nil || v < NumClasses || v > 31 || strconv.Itoa(v) != n {
			return 0, 0, false
		}
		class = v
	}
	ev, err := strconv.Atoi(e)
	if err != nil || ev < 0 || ev > MaxEvent || strconv.Itoa(ev) != e {
		return 0, 0, false
	}
	return class, ev, true
}
