package tlv

// litFilter finds, in one pass over a line, which of the rules' required
// literals (requiredLiteral) it contains: an Aho-Corasick automaton over
// the literals, its transitions a dense table over classes of bytes (the
// bytes of no literal are one class, which goes back to the start). A
// rule whose literal the line lacks cannot match it and is not tried;
// testing 25 literals one strings.Contains at a time cost more than the
// matching of the one or two rules left.
type litFilter struct {
	class [256]uint16
	ncls  int
	delta []int32  // state*ncls + class: the next state
	out   []uint64 // state*words ...: the literals that end at the state
	words int
	n     int // literals
}

// newLitFilter builds the automaton of distinct non-empty literals.
func newLitFilter(lits []string) *litFilter {
	f := &litFilter{n: len(lits), words: (len(lits) + 63) / 64}
	// Classes: each byte that some literal has, its own; the others, 0.
	for _, l := range lits {
		for i := 0; i < len(l); i++ {
			if f.class[l[i]] == 0 {
				f.ncls++
				f.class[l[i]] = uint16(f.ncls)
			}
		}
	}
	f.ncls++
	// The trie.
	type node struct {
		next map[uint16]int32
		fail int32
	}
	nodes := []node{{next: map[uint16]int32{}}}
	f.out = make([]uint64, f.words)
	for id, l := range lits {
		s := int32(0)
		for i := 0; i < len(l); i++ {
			c := f.class[l[i]]
			nx, ok := nodes[s].next[c]
			if !ok {
				nx = int32(len(nodes))
				nodes = append(nodes, node{next: map[uint16]int32{}})
				f.out = append(f.out, make([]uint64, f.words)...)
				nodes[s].next[c] = nx
			}
			s = nx
		}
		f.out[int(s)*f.words+id/64] |= 1 << (id % 64)
	}
	// Failure links, breadth first, and the dense transitions.
	f.delta = make([]int32, len(nodes)*f.ncls)
	queue := []int32{0}
	for len(queue) > 0 {
		s := queue[0]
		queue = queue[1:]
		for c := 0; c < f.ncls; c++ {
			nx, ok := nodes[s].next[uint16(c)]
			if !ok {
				if s != 0 {
					f.delta[int(s)*f.ncls+c] = f.delta[int(nodes[s].fail)*f.ncls+c]
				}
				continue
			}
			f.delta[int(s)*f.ncls+c] = nx
			if s != 0 {
				nodes[nx].fail = f.delta[int(nodes[s].fail)*f.ncls+c]
			}
			fw := int(nodes[nx].fail) * f.words
			for w := 0; w < f.words; w++ {
				f.out[int(nx)*f.words+w] |= f.out[fw+w]
			}
			queue = append(queue, nx)
		}
	}
	// Class 0 (bytes of no literal) leads back to the start: delta 0.
	return f
}

// scan sets in found (f.words words) the literals line contains.
func (f *litFilter) scan(line string, found []uint64) {
	clear(found)
	s := int32(0)
	if f.words == 1 {
		var m uint64
		for i := 0; i < len(line); i++ {
			s = f.delta[int(s)*f.ncls+int(f.class[line[i]])]
			m |= f.out[s]
		}
		found[0] = m
		return
	}
	for i := 0; i < len(line); i++ {
		s = f.delta[int(s)*f.ncls+int(f.class[line[i]])]
		if s != 0 {
			o := f.out[int(s)*f.words : int(s+1)*f.words]
			for w, x := range o {
				found[w] |= x
			}
		}
	}
}
