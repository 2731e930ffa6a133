package tracegen

// GenerateBagetSystem: several machines that exchange messages, simulated
// on one true clock, each writing its own Baget-model log with the times
// its own clock reads (seed 4.4: the traces of interacting target
// machines, merged into one table in time order; issue 22: clocks that
// disagree, aligned from the messages).
//
// Every machine is the simulator of GenerateBaget with its own config
// (seed, ABI, CPUs, Clock, ...). The machines advance on one true clock:
// the machine that is behind takes the next step. Each writes the time its
// Clock reads (BagetClock.Local); with zero Clocks the logs' timestamps are
// comparable, as on machines with synchronized clocks. Each machine has a
// message queue "net" (MQ_CREATE, mqueue id 3 of the first process): a
// third of the steps that would log a USER_EVENT instead send a network
// message to another machine, MQ_SEND on its "net" with msg_no = the
// message's id, unique in the system (from 1000001, apart from the local
// queues' numbers). The message arrives 5 to 50 µs (true time) later; the
// receiver logs, as soon as it has reached the arrival time and before its
// next step, MQ_RECEIVE on its "net" with the same msg_no. In each log a
// network send is a message sent and never received, a receipt one whose
// send is not in the log (its truth: MsgOpen, MsgNoSend); across the logs
// the description's <message> rules pair them by queue name and msg_no. A
// machine stops stepping after its Events; messages still in flight are
// delivered all the same.

import (
	"errors"
	"fmt"
	"math"
	"sort"

	"github.com/traceduck/traceduck/ingest/baget"
)

// BagetMessage is one message between two machines of a system.
type BagetMessage struct {
	ID             int64
	From, To       int   // machine indexes
	SendNS, RecvNS int64 // as the sender's and the receiver's logs give them (their own clocks)
	TrueSendNS     int64 // true times
	TrueRecvNS     int64
}

// NetQueue is the name of the message queue of the network messages.
const NetQueue = "net"

// netMsgBase: network message ids start past it.
const netMsgBase = 1000000

// BagetMachine is one machine's log, description and truth.
type BagetMachine struct {
	Log, Description []byte
	Truth            BagetTruth
}

type bnet struct {
	sims    []*bsim
	nextID  int64
	pending []BagetMessage // in flight, by arrival
	done    []BagetMessage
}

// GenerateBagetSystem simulates len(cfgs) >= 2 machines and returns each
// machine's log with its truth, and every message sent, in the order sent.
// RingBlocks must be 0: messages are the truth across logs, and a wrapped
// log would have lost some.
func GenerateBagetSystem(cfgs []BagetConfig) ([]BagetMachine, []BagetMessage, error) {
	if len(cfgs) < 2 || len(cfgs) > 16 {
		return nil, nil, fmt.Errorf("tracegen: a baget system has 2..16 machines, got %d", len(cfgs))
	}
	n := &bnet{nextID: netMsgBase}
	descs := make([][]byte, len(cfgs))
	for i, cfg := range cfgs {
		if cfg.RingBlocks != 0 {
			return nil, nil, errors.New("tracegen: baget system machines must not wrap (RingBlocks 0)")
		}
		// GenerateBaget's checks, on a config of one event.
		probe := cfg
		probe.Events = 1
		if _, _, _, err := GenerateBaget(probe); err != nil {
			return nil, nil, err
		}
		if cfg.Events <= 0 {
			return nil, nil, errors.New("tracegen: baget Events must be > 0")
		}
		cfg = bagetDefaults(cfg)
		if cfg.Events > netMsgBase/2 {
			return nil, nil, fmt.Errorf("tracegen: a baget system machine has at most %d events", netMsgBase/2)
		}
		cfgs[i] = cfg
		desc, err := BagetDescription(cfg.ABI)
		if err != nil {
			return nil, nil, err
		}
		d, err := baget.Parse("minirtos-"+cfg.ABI+".xml", desc)
		if err != nil {
			return nil, nil, fmt.Errorf("tracegen: baget description: %w", err)
		}
		s, err := newBSim(cfg, d)
		if err != nil {
			return nil, nil, err
		}
		s.net, s.node = n, i
		s.setup()
		s.netQueue()
		descs[i] = desc
		n.sims = append(n.sims, s)
	}
	for {
		// The machine whose next action comes first on the true clock
		// acts: the receipt of a message that has arrived (at once: an
		// idle machine is woken by it), else its next step, after its
		// idle time (GapNS). Finished machines only receive.
		var next *bsim
		var at int64
		recv := false
		for _, s := range n.sims {
			if s.err != nil {
				return nil, nil, s.err
			}
			t, r := int64(math.MaxInt64), false
			if s.events < s.cfg.Events {
				t = s.now + s.idle
			}
			if i := n.firstFor(s.node); i >= 0 && max(s.now, n.pending[i].TrueRecvNS) <= t {
				t, r = max(s.now, n.pending[i].TrueRecvNS), true
			}
			if t != math.MaxInt64 && (next == nil || t < at) {
				next, at, recv = s, t, r
			}
		}
		if next == nil {
			break
		}
		if recv {
			next.idle -= at - next.now
			next.now = at
			next.netReceive()
			continue
		}
		next.now = at
		next.idle = 0
		if next.cfg.GapNS > 0 {
			next.idle = next.rng.Int63n(next.cfg.GapNS + 1)
		}
		next.step()
	}
	out := make([]BagetMachine, len(n.sims))
	for i, s := range n.sims {
		if s.err != nil {
			return nil, nil, s.err
		}
		log, tr, err := s.finish()
		if err != nil {
			return nil, nil, err
		}
		out[i] = BagetMachine{Log: log, Description: descs[i], Truth: tr}
	}
	sort.Slice(n.done, func(i, j int) bool { return n.done[i].ID < n.done[j].ID })
	return out, n.done, nil
}

// bagetDefaults fills the defaults GenerateBaget applies.
func bagetDefaults(cfg BagetConfig) BagetConfig {
	if cfg.CPUs == 0 {
		cfg.CPUs = 2
	}
	if cfg.Threads == 0 {
		cfg.Threads = 2*cfg.CPUs + 2
	}
	if cfg.ABI == "" {
		cfg.ABI = "be64"
	}
	if cfg.BlockSize == 0 {
		cfg.BlockSize = 1024
	}
	return cfg
}

func (n *bnet) waiting(node int) bool { return n.firstFor(node) >= 0 }

// firstFor returns the index in pending of the first message to node, -1.
func (n *bnet) firstFor(node int) int {
	for i, m := range n.pending {
		if m.To == node {
			return i
		}
	}
	return -1
}

// netQueue creates the machine's queue of network messages.
func (s *bsim) netQueue() {
	q := &bsync{obj: BagetObj{Kind: "mqueue", Pid: int64(s.procs[0].OID), OID: 3}, name: NetQueue, max: 1 << 30, owner: -1}
	s.netq = q
	s.emit(s.rec("MQ_CREATE", 0).i("pid", q.obj.Pid).u("mq", q.obj.OID).u("attr.maxmsg", 1<<16).
		u("attr.msgsize", 64).text("name", name16(q.name)), 0, q.obj)
}

// netRecord logs a send or a receipt on the net queue, by the thread that
// runs on CPU c (none: the message is the machine's, no thread's).
func (s *bsim) netRecord(c int, send bool, id int64) {
	q := s.netq
	name, op := "MQ_RECEIVE", msgRecv
	if send {
		name, op = "MQ_SEND", msgSend
	}
	r := s.rec(name, 0).i("pid", q.obj.Pid).u("mq", q.obj.OID).i("msg_no", id).u("len", 16).u("msg_kind", 2).text("head.text", []byte("net"))
	s.emit(r, c, q.obj)
	s.mark(op, q.obj, s.cpus[c].cur, true, id)
}

// netSend sends a message from CPU c to another machine.
func (s *bsim) netSend(c int) {
	n := s.net
	to := s.rng.Intn(len(n.sims) - 1)
	if to >= s.node {
		to++
	}
	n.nextID++
	id := n.nextID
	s.netRecord(c, true, id)
	m := BagetMessage{ID: id, From: s.node, To: to, SendNS: s.recs[len(s.recs)-1].t, TrueSendNS: s.now,
		TrueRecvNS: s.now + 5000 + int64(s.rng.Intn(45000))}
	i := sort.Search(len(n.pending), func(i int) bool { return n.pending[i].TrueRecvNS > m.TrueRecvNS })
	n.pending = append(n.pending, BagetMessage{})
	copy(n.pending[i+1:], n.pending[i:])
	n.pending[i] = m
}

// netReceive logs the first message that has arrived at this machine, if
// any, and reports whether it did. TrueRecvNS becomes the time it was
// logged.
func (s *bsim) netReceive() bool {
	n := s.net
	i := n.firstFor(s.node)
	if i < 0 || n.pending[i].TrueRecvNS > s.now {
		return false
	}
	m := n.pending[i]
	n.pending = append(n.pending[:i], n.pending[i+1:]...)
	s.netRecord(s.rng.Intn(len(s.cpus)), false, m.ID)
	m.TrueRecvNS, m.RecvNS = s.now, s.recs[len(s.recs)-1].t
	n.done = append(n.done, m)
	return true
}
