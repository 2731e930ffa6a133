package tracegen

// GenerateBagetSystem: several machines that exchange messages, simulated
// on one clock, each writing its own Baget-model log (seed 4.4: the traces
// of interacting target machines, merged into one table in time order).
//
// Every machine is the simulator of GenerateBaget with its own config
// (seed, ABI, CPUs, ...). The machines advance on one shared clock: the
// machine whose clock is behind takes the next step, so the logs'
// timestamps are comparable, as on machines with synchronized clocks. A
// third of the steps that would log a USER_EVENT instead send a network
// message to another machine: USER_EVENT on object "net" (pid 0), value =
// the message id, data "send mID to nodeJ". The message arrives 5 to 50 µs
// later; the receiver logs, as soon as its clock has reached the arrival
// time and before its next step, USER_EVENT on "net" with the same value
// and data "recv mID from nodeI". A machine stops stepping after its
// Events; messages still in flight are delivered all the same.

import (
	"errors"
	"fmt"
	"sort"

	"github.com/traceduck/traceduck/ingest/baget"
)

// BagetMessage is one message between two machines of a system.
type BagetMessage struct {
	ID             int64
	From, To       int // machine indexes
	SendNS, RecvNS int64
}

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
	n := &bnet{}
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
		descs[i] = desc
		n.sims = append(n.sims, s)
	}
	for {
		// The machine behind on the clock goes next; finished machines
		// only receive.
		var next *bsim
		for _, s := range n.sims {
			if s.err != nil {
				return nil, nil, s.err
			}
			if (s.events < s.cfg.Events || n.waiting(s.node)) && (next == nil || s.now < next.now) {
				next = s
			}
		}
		if next == nil {
			break
		}
		if !next.netReceive() {
			if next.events < next.cfg.Events {
				next.step()
			} else {
				// Only messages in flight left for it: let its clock run.
				next.now = n.pending[n.firstFor(next.node)].RecvNS
				next.netReceive()
			}
		}
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

var netObj = BagetObj{Kind: "user", Text: "net"}

func (s *bsim) netRecord(c int, id int64, data string) {
	s.emit(s.rec("USER_EVENT", len(data)).i("pid", 0).text("object", []byte(netObj.Text)).
		i("value", id).u("len", uint64(len(data))).text("data", []byte(data)), c, netObj)
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
	s.netRecord(c, id, fmt.Sprintf("send m%d to node%d", id, to))
	m := BagetMessage{ID: id, From: s.node, To: to, SendNS: s.now, RecvNS: s.now + 5000 + int64(s.rng.Intn(45000))}
	i := sort.Search(len(n.pending), func(i int) bool { return n.pending[i].RecvNS > m.RecvNS })
	n.pending = append(n.pending, BagetMessage{})
	copy(n.pending[i+1:], n.pending[i:])
	n.pending[i] = m
}

// netReceive logs the first message that has arrived at this machine, if
// any, and reports whether it did. RecvNS becomes the time it was logged.
func (s *bsim) netReceive() bool {
	n := s.net
	i := n.firstFor(s.node)
	if i < 0 || n.pending[i].RecvNS > s.now {
		return false
	}
	m := n.pending[i]
	n.pending = append(n.pending[:i], n.pending[i+1:]...)
	s.netRecord(s.rng.Intn(len(s.cpus)), m.ID, fmt.Sprintf("recv m%d from node%d", m.ID, m.From))
	m.RecvNS = s.now
	n.done = append(n.done, m)
	return true
}
