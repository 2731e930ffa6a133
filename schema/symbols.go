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

func (t *symtab) str(s Sym) string {
	if s < 0 || int(s) >= len(t.names) {
		return ""
	}
	return t.names[s]
}
