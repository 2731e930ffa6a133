package schema

import (
	"encoding/binary"
	"errors"
	"io"
	"os"
)

// treeSpill keeps every duration the state tree counts, with its group,
// in a temporary file, so that the percentiles the histograms cannot
// tell are taken from the durations when the run ends (resolvePcts), not
// by state_stats_tree joining every interval of the run to them at each
// query (most of the tree's query time: on a 10M-event ftrace run 1.85 of
// 2.40 s). 12 bytes an interval; the file is unlinked once made, so that
// nothing stays behind a process that dies. Any error leaves the
// percentiles to the view, as before.
type treeSpill struct {
	dir string // "" : os.TempDir()
	f   *os.File
	buf []byte
	err error
}

const (
	spillRecord = 12
	spillChunk  = spillRecord << 16
)

// add appends the duration d of group g.
func (s *treeSpill) add(g int32, d int64) {
	if s.err != nil {
		return
	}
	if s.f == nil {
		f, err := os.CreateTemp(s.dir, ".traceduck-tree-*")
		if err != nil {
			s.err = err
			return
		}
		os.Remove(f.Name()) // where the OS lets an open file be unlinked
		s.f, s.buf = f, make([]byte, 0, spillChunk)
	}
	s.buf = binary.LittleEndian.AppendUint32(s.buf, uint32(g))
	s.buf = binary.LittleEndian.AppendUint64(s.buf, uint64(d))
	if len(s.buf) == spillChunk {
		s.flush()
	}
}

func (s *treeSpill) flush() {
	if s.err == nil && len(s.buf) > 0 {
		_, s.err = s.f.Write(s.buf)
	}
	s.buf = s.buf[:0]
}

// each calls fn with every record, in the order added.
func (s *treeSpill) each(fn func(g int32, d int64)) error {
	if s.f == nil {
		return s.err
	}
	s.flush()
	if s.err != nil {
		return s.err
	}
	if _, err := s.f.Seek(0, io.SeekStart); err != nil {
		return err
	}
	buf := make([]byte, spillChunk)
	for {
		n, err := io.ReadFull(s.f, buf)
		if n%spillRecord != 0 {
			return errors.New("schema: tree spill file cut short")
		}
		for i := 0; i < n; i += spillRecord {
			fn(int32(binary.LittleEndian.Uint32(buf[i:])), int64(binary.LittleEndian.Uint64(buf[i+4:])))
		}
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// close lets go of the file.
func (s *treeSpill) close() {
	if s.f != nil {
		s.f.Close()
		os.Remove(s.f.Name()) // where it could not be unlinked open
		s.f = nil
	}
	s.buf = nil
}

// pctTarget is a percentile a node's histogram could not tell: the
// rank-th smallest of the node's durations in [lo, hi].
type pctTarget struct {
	node   *treeNode
	p      int
	lo, hi int64
	rank   int64
	done   bool
}

// spillBins is how many parts a pass of resolvePcts cuts a target's range
// into, and maxPassTargets how many targets a pass counts at most (their
// counts: 4 KB each; a variable for tests).
const spillBins = 1024

var maxPassTargets = 4096

// resolvePcts takes the percentiles the nodes of both orders left
// unknown from the spilled durations, by a radix select:
//
//  1. Each target has a range, at first its bucket, and a rank in it.
//  2. A pass over the file counts the durations of the target's groups
//     (those with durations in its bucket) in each of spillBins equal
//     parts of its range.
//  3. The part where the rank falls is the new range, the rank less the
//     durations below it; a range of one value is the percentile.
//
// A range shrinks 1024-fold a pass, so a bucket takes at most 7 passes
// (a fine bucket of durations near 1 ms, 2^14 ns wide, takes 2); targets are taken maxPassTargets at a time, which
// bounds the counts' memory. A percentile not found (the spill failed) is
// left to the view.
func (t *stateTree) resolvePcts(orders *[2]treeOrder) {
	var all []pctTarget
	var pairs []nodeItem // (target, group)
	for ord := range orders {
		o := &orders[ord]
		for i := range o.nodes {
			n := &o.nodes[i]
			if n.count == 0 {
				continue
			}
			for p := range treePcts {
				if n.known[p] {
					continue
				}
				res, b := histRes(n.res), int(n.tb[p])
				lo, hi := res.bounds(b)
				id := int32(len(all))
				all = append(all, pctTarget{node: n, p: p, lo: lo, hi: hi, rank: n.pct[p]})
				for _, gi := range o.groupsOf(n) {
					if t.groups[gi].hist.has(res, b) {
						pairs = append(pairs, nodeItem{id, gi})
					}
				}
			}
		}
	}
	if len(all) == 0 {
		return
	}
	// the groups by target, so that a chunk of targets takes its own
	ofTarget := make([]span, len(all))
	byTarget := spread(pairs, len(all), func(i int32, s span) { ofTarget[i] = s })
	cnt := make([]uint32, min(len(all), maxPassTargets)*spillBins)
	for from := 0; from < len(all); from += maxPassTargets {
		chunk := all[from:min(from+maxPassTargets, len(all))]
		var cp []nodeItem // (group, target in chunk)
		for ti := range chunk {
			s := ofTarget[from+ti]
			for _, g := range byTarget[s.from:s.to] {
				cp = append(cp, nodeItem{g, int32(ti)})
			}
		}
		spans := make([]span, len(t.groups))
		list := spread(cp, len(t.groups), func(g int32, s span) { spans[g] = s })
		for left := len(chunk); left > 0; {
			clear(cnt[:len(chunk)*spillBins])
			err := t.spill.each(func(g int32, d int64) {
				if int(g) >= len(spans) {
					return
				}
				s := spans[g]
				for _, ti := range list[s.from:s.to] {
					tt := &chunk[ti]
					if tt.done || d < tt.lo || d > tt.hi {
						continue
					}
					w := (tt.hi-tt.lo)/spillBins + 1
					cnt[int(ti)*spillBins+int((d-tt.lo)/w)]++
				}
			})
			if err != nil {
				return // the view takes them
			}
			for ti := range chunk {
				tt := &chunk[ti]
				if tt.done {
					continue
				}
				w := (tt.hi-tt.lo)/spillBins + 1
				below, found := int64(0), false
				for b, c := range cnt[ti*spillBins : (ti+1)*spillBins] {
					if below+int64(c) >= tt.rank {
						// (the end as an offset from lo: never past hi, nor
						// past MaxInt64 in the last bucket)
						tt.lo += int64(b) * w
						tt.hi = tt.lo + min(w-1, tt.hi-tt.lo)
						tt.rank -= below
						found = true
						break
					}
					below += int64(c)
				}
				switch {
				case !found:
					tt.done = true // not in the file: left to the view
					left--
				case tt.lo == tt.hi:
					tt.node.pct[tt.p], tt.node.known[tt.p] = tt.lo, true
					tt.done = true
					left--
				}
			}
		}
	}
}
