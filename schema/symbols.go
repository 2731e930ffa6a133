package schema

import (
	"strings"
	"unicode/utf8"
)

// symtab interns strings as Syms. Lookups by []byte do not allocate.
// A string that is not UTF-8 is kept under its own bytes as the key and
// stored repaired (U+FFFD), as strCol does for plain columns.
type symtab struct {
	ids   map[string]Sym
	names []string
	bad   int64
}

func newSymtab() *symtab { return &symtab{ids: make(map[string]Sym)} }

func (t *symtab) intern(s string) Sym {
	if id, ok := t.ids[s]; ok {
		return id
	}
	id := Sym(len(t.names))
	t.ids[s] = id
	if !utf8.ValidString(s) {
		t.bad++
		s = strings.ToValidUTF8(s, "\uFFFD")
	}
	t.names = append(t.names, s)
	return id
}

func (t *symtab) internBytes(b []byte) Sym {
	if id, ok := t.ids[string(b)]; ok { // no allocation for the lookup
		return id
	}
	return t.intern(string(b))
}

// preload makes the table start from the symbols a database already holds:
// names[i] is symbol i ("" in a gap, which is never looked up by name).
// A name held twice keeps its first id.
func (t *symtab) preload(names []string) {
	if len(t.names) > 0 {
		panic("schema: symbols preloaded after the first one was interned")
	}
	for i, n := range names {
		if _, ok := t.ids[n]; !ok && n != "" {
			t.ids[n] = Sym(i)
		}
	}
	t.names = append(t.names, names...)
}

func (t *symtab) str(s Sym) string {
	if s < 0 || int(s) >= len(t.names) {
		return ""
	}
	return t.names[s]
}
