package recount

import (
	"bufio"
	"fmt"
	"math/big"
	"os"
	"regexp"
	"sort"
	"strconv"
)

// ReadQNXMessages recounts the messages of a traceprinter listing from
// its raw lines, the way docs/semantics.md ("Messages: round trips") says
// QNX's are paired, without traceduck's code. One row per message, sorted:
//
//	client | server | msg_id | send_ns | receive_ns | reply_ns | one_way | truncated
//
// client and server are "pid/tid" (a thread), "pid P" (the process a send
// names, when no receive says which thread) or NULL; times are ns =
// floor(cycles*1e9/TRACE_CYCLES_PER_SEC) of the 64-bit cycle count (high
// word from CONTROL TIME, a low word going back by more than half its
// range as a wrap), NULL when not in the trace. The rules:
//   - The thread of a CPU is the last one THRUNNING there (a thread that
//     runs elsewhere leaves it; THDESTROY of it leaves none); it sends and
//     receives what the CPU's COMM events say.
//   - SND_MESSAGE rcvid pid: the CPU's thread sends to process pid; a
//     thread that sends again before its reply gives up the message it
//     waited for (truncated). REC_MESSAGE rcvid: the CPU's thread receives
//     the oldest message in flight with that rcvid (none: a row without
//     its send, truncated; rcvid 0xffffffff: nothing). REPLY_MESSAGE or
//     MSG_ERROR tid pid: the message thread pid/tid waits for ends
//     (without one: nothing). A message whose client is not known ends at
//     its receive.
//   - SND_PULSE scoid pid: the CPU's thread sends a pulse; SND_PULSE_EXE,
//     _DIS, _DEA, _UN, _QUN: the kernel does (no client). REC_PULSE scoid
//     pid: the CPU's thread receives the oldest pulse in flight with that
//     scoid and pid (none: a row without its send).
//   - What is in flight at the end is truncated.
func ReadQNXMessages(path string) ([]string, error) {
	msgs, err := ReadQNXMessageList(path)
	if err != nil {
		return nil, err
	}
	null := func(v int64) string {
		if v < 0 {
			return "NULL"
		}
		return strconv.FormatInt(v, 10)
	}
	name := func(s string) string {
		if s == "" {
			return "NULL"
		}
		return s
	}
	rows := make([]string, len(msgs))
	for i, m := range msgs {
		rows[i] = fmt.Sprintf("%s | %s | %d | %s | %s | %s | %v | %v", name(m.Client), name(m.Server), m.ID, null(m.Send), null(m.Recv), null(m.Reply), m.OneWay, m.Truncated)
	}
	sort.Strings(rows)
	return rows, nil
}

// QNXMessage is one message of a recount: Client and Server "pid/tid",
// "pid P" or "" (not known), times in ns (-1: not in the trace).
type QNXMessage struct {
	Client, Server    string
	ID                int64
	Send, Recv, Reply int64
	OneWay, Truncated bool
}

// RoundTrips sums the complete round trips per "client -> server": how
// many, and their total time (send to reply delivered).
func RoundTrips(msgs []QNXMessage) map[string]Sum {
	out := map[string]Sum{}
	for _, m := range msgs {
		if !m.OneWay && !m.Truncated {
			k := m.Client + " -> " + m.Server
			s := out[k]
			s.N++
			s.NS += m.Reply - m.Send
			out[k] = s
		}
	}
	return out
}

// ReadQNXMessageList is ReadQNXMessages' messages, in the order they
// ended.
func ReadQNXMessageList(path string) ([]QNXMessage, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	evRE := regexp.MustCompile(`^t:0x([0-9a-fA-F]+)\s+CPU:(\d+)\s+([A-Z_]+)\s*:\s*(\S+)(.*)$`)
	hdrRE := regexp.MustCompile(`^\s*TRACE_CYCLES_PER_SEC:: (\d+)`)
	field := func(k string) *regexp.Regexp { return regexp.MustCompile(`(?:^|\s)` + k + `:(0x[0-9a-fA-F]+|-?\d+)`) }
	pidRE, tidRE, msbRE, rcvidRE, scoidRE := field("pid"), field("tid"), field("msb"), field("rcvid"), field("scoid")
	num := func(re *regexp.Regexp, s string) (int64, bool) {
		m := re.FindStringSubmatch(s)
		if m == nil {
			return 0, false
		}
		v, err := strconv.ParseInt(m[1], 0, 64)
		return v, err == nil
	}
	type msg struct {
		client, server      string
		id                  int64
		send, recv, reply   int64 // -1: not in the trace
		oneWay, gone, await bool
	}
	var rows []QNXMessage
	out := func(m *msg) {
		m.gone = true
		cut := m.send < 0 || m.recv < 0 || (!m.oneWay && m.reply < 0)
		rows = append(rows, QNXMessage{m.client, m.server, m.id, m.send, m.recv, m.reply, m.oneWay, cut})
	}
	var order []*msg              // in flight, in send order
	queues := map[string][]*msg{} // key -> sent, not received
	waits := map[string]*msg{}    // client -> its round trip
	take := func(key string) *msg {
		q := queues[key]
		for len(q) > 0 && q[0].gone {
			q = q[1:]
		}
		if len(q) == 0 {
			delete(queues, key)
			return nil
		}
		m := q[0]
		queues[key] = q[1:]
		return m
	}
	cps := big.NewInt(1_000_000_000)
	var hi uint64
	var last uint32
	onCPU := map[int]string{}
	cpuOf := map[string]int{}
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		l := sc.Text()
		if m := hdrRE.FindStringSubmatch(l); m != nil {
			cps.SetString(m[1], 10)
			continue
		}
		m := evRE.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		lo64, _ := strconv.ParseUint(m[1], 16, 64)
		lo := uint32(lo64)
		if m[3] == "CONTROL" && m[4] == "TIME" {
			v, _ := num(msbRE, m[5])
			hi = uint64(v)
		} else if lo < last && last-lo > 1<<31 {
			hi++
		}
		last = lo
		x := new(big.Int).SetUint64(hi<<32 | uint64(lo))
		now := x.Quo(x.Mul(x, big.NewInt(1_000_000_000)), cps).Int64()
		n, _ := strconv.Atoi(m[2])
		pid, hasPid := num(pidRE, m[5])
		tid, hasTid := num(tidRE, m[5])
		switch m[3] {
		case "THREAD":
			if !hasPid || !hasTid {
				continue
			}
			th := fmt.Sprintf("%d/%d", pid, tid)
			switch m[4] {
			case "THRUNNING":
				if d, ok := cpuOf[th]; ok && d != n && onCPU[d] == th {
					delete(onCPU, d)
				}
				onCPU[n], cpuOf[th] = th, n
			case "THDESTROY":
				if d, ok := cpuOf[th]; ok && onCPU[d] == th {
					delete(onCPU, d)
				}
				delete(cpuOf, th)
			}
		case "COMM":
			switch ev := m[4]; ev {
			case "SND_MESSAGE":
				rcvid, _ := num(rcvidRE, m[5])
				x := &msg{client: onCPU[n], server: fmt.Sprintf("pid %d", pid), id: rcvid, send: now, recv: -1, reply: -1}
				if x.client != "" {
					if old := waits[x.client]; old != nil && !old.gone {
						out(old)
					}
					waits[x.client], x.await = x, true
				}
				key := "m" + strconv.FormatInt(rcvid, 10)
				queues[key] = append(queues[key], x)
				order = append(order, x)
			case "REC_MESSAGE":
				rcvid, _ := num(rcvidRE, m[5])
				if uint32(rcvid) == 0xffffffff {
					continue
				}
				x := take("m" + strconv.FormatInt(rcvid, 10))
				if x == nil {
					out(&msg{server: onCPU[n], id: rcvid, send: -1, recv: now, reply: -1})
					continue
				}
				if s := onCPU[n]; s != "" {
					x.server = s
				}
				x.recv = now
				if !x.await {
					out(x)
				}
			case "REPLY_MESSAGE", "MSG_ERROR":
				cl := fmt.Sprintf("%d/%d", pid, tid)
				if x := waits[cl]; x != nil && !x.gone {
					delete(waits, cl)
					x.reply = now
					out(x)
				}
			case "SND_PULSE", "SND_PULSE_EXE", "SND_PULSE_DIS", "SND_PULSE_DEA", "SND_PULSE_UN", "SND_PULSE_QUN", "REC_PULSE":
				scoid, _ := num(scoidRE, m[5])
				key := fmt.Sprintf("p%d/%d", scoid, pid)
				if ev == "REC_PULSE" {
					x := take(key)
					if x == nil {
						x = &msg{id: scoid, send: -1, reply: -1, oneWay: true}
					}
					if s := onCPU[n]; s != "" {
						x.server = s
					}
					x.recv = now
					out(x)
					continue
				}
				x := &msg{server: fmt.Sprintf("pid %d", pid), id: scoid, send: now, recv: -1, reply: -1, oneWay: true}
				if ev == "SND_PULSE" {
					x.client = onCPU[n]
				}
				queues[key] = append(queues[key], x)
				order = append(order, x)
			}
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	for _, x := range order {
		if !x.gone {
			out(x)
		}
	}
	return rows, nil
}
