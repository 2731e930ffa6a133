package schema

// symtab interns strings as Syms. Lookups by []byte do not allocate.
type symtab struct {
	ids   map[string]Sym
	names []string
}

func newSymtab() *symtab { return &symtab{ids: make(map[string]Sym)} }

func (t *symtab) intern(s string) Sym {
	if id, ok := t.ids[s]; ok {
		return id
	}
	id := Sym(len(t.names))
	t.ids[s] = id
	t.names = append(t.names, s)
	return id
}

func (t *symtab) internBytes(b []byte) Sym {
	if id, ok := t.ids[string(b)]; ok { // no allocation for the lookup
		return id
	}
	return t.intern(string(b))
}

func (t *symtab) str(s Sym) string {
	if s < 0 || int(s) >= len(t.names) {
		return ""
	}
	return t.names[s]
}
