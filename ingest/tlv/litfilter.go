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

	// next is delta for scan: state*ncls + class gives the next state
	// times ncls, with the sign bit set when literals end there.
	next []int32
}

// maxLitTable bounds the automaton's table (entries of 4 bytes): a rule
// file of many long literals gets none (newLitFilter returns nil), and
// each rule's literal is looked for on its own.
const maxLitTable = 1 << 21

// newLitFilter builds the automaton of distinct non-empty literals; nil
// when its table would be larger than maxLitTable.
func newLitFilter(lits []string) *litFilter {
	total := 1
	for _, l := range lits {
		total += len(l)
	}
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
	if total*f.ncls > maxLitTable {
		return nil // states are at most the literals' bytes and the start
	}
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
	f.next = make([]int32, len(f.delta))
	for i, d := range f.delta {
		f.next[i] = d * int32(f.ncls)
		for w := 0; w < f.words; w++ {
			if f.out[int(d)*f.words+w] != 0 {
				f.next[i] |= -1 << 31
			}
		}
	}
	return f
}

// scan sets in found (f.words words) the literals line contains.
func (f *litFilter) scan(line string, found []uint64) {
	clear(found)
	next, class := f.next, &f.class
	off := int32(0) // the state times ncls
	for i := 0; i < len(line); i++ {
		e := next[off+int32(class[line[i]])]
		off = e & (1<<31 - 1)
		if e < 0 { // literals end here
			s := int(off) / f.ncls
			for w, x := range f.out[s*f.words : (s+1)*f.words] {
				found[w] |= x
			}
		}
	}
}
