package baget

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/traceduck/traceduck/ingest"
)

// Display formats of simple fields: the seed's s = Show(v, F) (seed 3.4),
// docs/baget-format.md 2.11. A field's format= names a built-in format or
// an <enum>/<flags> of <Formats>, or is "enum"/"flags" with the names
// inside the <field>.

// FormatKind is how a format shows a value.
type FormatKind uint8

const (
	FmtDec   FormatKind = iota + 1 // decimal, signed for signed types
	FmtHex                         // 0x2a: the field's bits, no leading zeros
	FmtOct                         // 052: C octal, the field's bits
	FmtBin                         // 0b101010
	FmtChar                        // 'A': a C character constant of the field's bytes
	FmtPtr                         // 0x0000002a: hex zero-padded to the field's width
	FmtEnum                        // a name per value; other values in decimal
	FmtFlags                       // a name per bit, joined by |; other bits as 0x..
)

// builtinFormats are the format names a field may give without <Formats>.
var builtinFormats = map[string]FormatKind{
	"dec": FmtDec, "hex": FmtHex, "oct": FmtOct, "bin": FmtBin, "char": FmtChar, "ptr": FmtPtr,
	"enum": FmtEnum, "flags": FmtFlags,
}

var formatKindNames = [...]string{"?", "dec", "hex", "oct", "bin", "char", "ptr", "enum", "flags"}

func (k FormatKind) String() string {
	if int(k) < len(formatKindNames) {
		return formatKindNames[k]
	}
	return "?"
}

// FormatName is one <value> of an enum (V its value's 64 bits, sign
// extended; Neg when it was written negative) or one <bit> of flags (V the
// bit number).
type FormatName struct {
	V    uint64
	Neg  bool
	Name string
	Line int
}

// Format is a display format (docs/baget-format.md 2.11).
type Format struct {
	Kind  FormatKind
	Name  string       // the Name of its <enum> or <flags> in <Formats>; "" otherwise
	Names []FormatName // enum values ascending (as signed when Neg), flag bits ascending
	Line  int
	byV   map[uint64]string // enum: value -> name
}

// String is the format as describe prints it: "hex", "enum{1=SLEEP,2=SEM}",
// "enum:block_reason{...}", "flags{0=FPU,3=READY}".
func (f *Format) String() string {
	var b strings.Builder
	b.WriteString(f.Kind.String())
	if f.Name != "" {
		b.WriteString(":" + f.Name)
	}
	if f.Kind == FmtEnum || f.Kind == FmtFlags {
		b.WriteByte('{')
		for i, n := range f.Names {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(n.number() + "=" + n.Name)
		}
		b.WriteByte('}')
	}
	return b.String()
}

func (n FormatName) number() string {
	if n.Neg {
		return strconv.FormatInt(int64(n.V), 10)
	}
	return strconv.FormatUint(n.V, 10)
}

// finish sorts the names and indexes an enum's values.
func (f *Format) finish() {
	sort.Slice(f.Names, func(i, j int) bool {
		a, b := f.Names[i], f.Names[j]
		if a.Neg != b.Neg {
			return a.Neg
		}
		return a.V < b.V
	})
	if f.Kind == FmtEnum {
		f.byV = make(map[uint64]string, len(f.Names))
		for _, n := range f.Names {
			f.byV[n.V] = n.Name
		}
	}
}

// Show returns the display string of a value v of a field of size bytes
// (1 to 8); signed says whether v is sign-extended from size bytes (a
// signed type). It is AppendShow into a new string.
func (f *Format) Show(v uint64, size int, signed bool) string {
	return string(f.AppendShow(nil, v, size, signed))
}

// AppendShow appends the display string of v (see Show).
//
//   - dec: signed types as signed, others unsigned.
//   - hex, oct, bin, ptr: the size*8 bits of the field as unsigned (a
//     signed char -1 is 0xff); ptr pads to 2*size hex digits.
//   - char: the field's bytes from the most significant, leading zero
//     bytes dropped, as a C character constant: printable ASCII as itself
//     (' and \ escaped), \0 \t \n \r, other bytes \xNN; 0 is '\0'.
//   - enum: the value's name; a value without one in decimal as dec.
//   - flags: the names of the set bits from bit 0 up joined by "|", then
//     the set bits without a name as one 0x.. mask; 0 is "0".
func (f *Format) AppendShow(dst []byte, v uint64, size int, signed bool) []byte {
	if size < 1 || size > 8 {
		size = 8
	}
	bits := uint(8 * size)
	u := v
	if bits < 64 {
		u &= 1<<bits - 1
	}
	dec := func(dst []byte) []byte {
		if signed {
			if bits < 64 { // sign-extend from the field's width
				return strconv.AppendInt(dst, int64(u<<(64-bits))>>(64-bits), 10)
			}
			return strconv.AppendInt(dst, int64(u), 10)
		}
		return strconv.AppendUint(dst, u, 10)
	}
	switch f.Kind {
	case FmtHex:
		return strconv.AppendUint(append(dst, "0x"...), u, 16)
	case FmtOct:
		if u == 0 {
			return append(dst, '0')
		}
		return strconv.AppendUint(append(dst, '0'), u, 8)
	case FmtBin:
		return strconv.AppendUint(append(dst, "0b"...), u, 2)
	case FmtPtr:
		const digits = "0123456789abcdef"
		dst = append(dst, "0x"...)
		for i := int(2*size) - 1; i >= 0; i-- {
			dst = append(dst, digits[(u>>(4*uint(i)))&15])
		}
		return dst
	case FmtChar:
		dst = append(dst, '\'')
		i := size - 1
		for i > 0 && (u>>(8*uint(i)))&0xff == 0 {
			i--
		}
		for ; i >= 0; i-- {
			dst = appendCChar(dst, byte(u>>(8*uint(i))))
		}
		return append(dst, '\'')
	case FmtEnum:
		key := u
		if signed && bits < 64 {
			key = uint64(int64(u<<(64-bits)) >> (64 - bits))
		}
		if name, ok := f.byV[key]; ok {
			return append(dst, name...)
		}
		return dec(dst)
	case FmtFlags:
		if u == 0 {
			return append(dst, '0')
		}
		rest := u
		first := true
		for _, n := range f.Names {
			if n.V < 64 && u&(1<<n.V) != 0 {
				if !first {
					dst = append(dst, '|')
				}
				dst = append(dst, n.Name...)
				first = false
				rest &^= 1 << n.V
			}
		}
		if rest != 0 {
			if !first {
				dst = append(dst, '|')
			}
			dst = strconv.AppendUint(append(dst, "0x"...), rest, 16)
		}
		return dst
	}
	return dec(dst)
}

// appendCChar appends one byte of a C character constant.
func appendCChar(dst []byte, c byte) []byte {
	switch c {
	case 0:
		return append(dst, `\0`...)
	case '\t':
		return append(dst, `\t`...)
	case '\n':
		return append(dst, `\n`...)
	case '\r':
		return append(dst, `\r`...)
	case '\'', '\\':
		return append(dst, '\\', c)
	}
	if c >= 0x20 && c < 0x7f {
		return append(dst, c)
	}
	const digits = "0123456789abcdef"
	return append(dst, '\\', 'x', digits[c>>4], digits[c&15])
}

// formattable reports whether a base type takes a format: integers, char,
// object ids, pointers (not _Bool, floats, struct timespec).
func formattable(b *BaseType) bool {
	switch b.Kind {
	case KindInt, KindUint, KindChar, KindObject, KindPointer:
		return true
	}
	return false
}

// appendShowJSON appends, for a field with a format, the display string
// of the value at n.Offset+delta as a JSON string (null when the record is
// too short to hold it).
func (d *Description) appendShowJSON(dst []byte, n *Node, rec []byte, delta int) []byte {
	u, signed, ok := d.raw(rec, n, delta)
	if !ok {
		return append(dst, "null"...)
	}
	var buf [80]byte
	return ingest.AppendJSONString(dst, n.Format.AppendShow(buf[:0], u, n.Base.Size, signed))
}

// formats reads <Formats>: the <enum>s and <flags> fields name in format=.
func (p *parser) formats(fe *elem) error {
	if err := p.checkAttrs(fe); err != nil {
		return err
	}
	for _, e := range fe.kids {
		var kind FormatKind
		switch e.name {
		case "enum":
			kind = FmtEnum
		case "flags":
			kind = FmtFlags
		default:
			return p.errf(e.line, "<enum> or <flags> inside <Formats> expected, found <%s>", e.name)
		}
		if len(p.d.Formats) >= maxTypes {
			return p.errf(e.line, "at most %d <enum> and <flags> elements expected, found more", maxTypes)
		}
		if err := p.checkAttrs(e, "Name"); err != nil {
			return err
		}
		name, err := p.need(e, "Name")
		if err != nil {
			return err
		}
		switch {
		case !isIdent(name):
			return p.errf(e.line, "an identifier as <%s Name=> expected, found %q", e.name, clip(name))
		case builtinFormats[name] != 0:
			return p.errf(e.line, "a new format name in <%s Name=> expected, found %q, a built-in format", e.name, name)
		case p.d.Formats[name] != nil:
			return p.errf(e.line, "a format name unique in <Formats> expected, found a second %q (first at line %d)", name, p.d.Formats[name].Line)
		}
		f, err := p.formatNames(e, kind, fmt.Sprintf("<%s %q>", e.name, name))
		if err != nil {
			return err
		}
		f.Name = name
		p.d.Formats[name] = f
	}
	return nil
}

// fieldFormat reads a <field>'s format= (and, for "enum" and "flags", the
// <value>s or <bit>s inside it).
func (p *parser) fieldFormat(e *elem, field, v string) (*Format, error) {
	kind := builtinFormats[v]
	if kind == FmtEnum || kind == FmtFlags {
		return p.formatNames(e, kind, fmt.Sprintf("<field %q format=%q>", field, v))
	}
	if len(e.kids) > 0 {
		return nil, p.errf(e.kids[0].line, "no elements inside <field format=%q> expected, found <%s>", clip(v), e.kids[0].name)
	}
	if kind != 0 {
		return &Format{Kind: kind, Line: e.line}, nil
	}
	if f := p.d.Formats[v]; f != nil {
		return f, nil
	}
	return nil, p.errf(e.line, "field %q: format dec, hex, oct, bin, char, ptr, enum, flags or the Name of an <enum> or <flags> in <Formats> expected, found %q", field, clip(v))
}

// formatNames reads the <value>s (enum) or <bit>s (flags) inside e; what
// names e in errors.
func (p *parser) formatNames(e *elem, kind FormatKind, what string) (*Format, error) {
	child := "value"
	if kind == FmtFlags {
		child = "bit"
	}
	f := &Format{Kind: kind, Line: e.line}
	if len(e.kids) == 0 {
		return nil, p.errf(e.line, "%s with <%s> children expected, found none", what, child)
	}
	byV := map[uint64]FormatName{}
	byName := map[string]int{}
	for _, k := range e.kids {
		if k.name != child {
			return nil, p.errf(k.line, "<%s> inside %s expected, found <%s>", child, what, k.name)
		}
		if len(f.Names) >= maxFormatNames {
			return nil, p.errf(k.line, "at most %d <%s> in %s expected, found more", maxFormatNames, child, what)
		}
		if err := p.checkAttrs(k, "n", "name"); err != nil {
			return nil, err
		}
		if len(k.kids) > 0 {
			return nil, p.errf(k.kids[0].line, "no elements inside <%s> expected, found <%s>", child, k.kids[0].name)
		}
		nv, err := p.need(k, "n")
		if err != nil {
			return nil, err
		}
		name, err := p.need(k, "name")
		if err != nil {
			return nil, err
		}
		fn := FormatName{Name: name, Line: k.line}
		if kind == FmtFlags {
			b, err := strconv.Atoi(nv)
			if err != nil || b < 0 || b > 63 {
				return nil, p.errf(k.line, "<bit n=> a bit number 0 to 63 expected, found %q", clip(nv))
			}
			fn.V = uint64(b)
		} else if i, err := strconv.ParseInt(nv, 0, 64); err == nil {
			fn.V, fn.Neg = uint64(i), i < 0
		} else if u, err := strconv.ParseUint(nv, 0, 64); err == nil {
			fn.V = u
		} else {
			return nil, p.errf(k.line, "<value n=> an integer expected, found %q", clip(nv))
		}
		if !isIdent(name) {
			return nil, p.errf(k.line, "<%s name=> a C identifier expected, found %q", child, clip(name))
		}
		if prev, dup := byV[fn.V]; dup {
			return nil, p.errf(k.line, "a <%s n=> unique in %s expected, found a second %s (first at line %d)", child, what, fn.number(), prev.Line)
		}
		if line, dup := byName[name]; dup {
			return nil, p.errf(k.line, "a <%s name=> unique in %s expected, found a second %q (first at line %d)", child, what, name, line)
		}
		byV[fn.V], byName[name] = fn, k.line
		f.Names = append(f.Names, fn)
	}
	f.finish()
	return f, nil
}

// checkFormat checks that a field's format suits its type: an integer,
// char, object-id or pointer field or array (not a char array: text), and
// an enum's values and a flags' bits within the type.
func (p *parser) checkFormat(f *fieldDecl, m member) error {
	fm := f.format
	if fm == nil {
		return nil
	}
	t := f.typeName
	for _, d := range f.dims {
		t += "[" + strconv.Itoa(d) + "]"
	}
	what := fm.Kind.String()
	if fm.Name != "" {
		what = fm.Name
	}
	if m.base == nil || !formattable(m.base) || m.base.Kind == KindChar && f.dims != nil {
		return p.errf(f.el.line, "field %q: format=%q on a field of an integer, char, object-id or pointer type (or an array of them, not of char) expected, found type %s", f.name, what, clip(t))
	}
	bits := 8 * m.base.Size
	signed := m.base.Signed && m.base.Kind != KindPointer
	for _, n := range fm.Names {
		if fm.Kind == FmtFlags {
			if int(n.V) >= bits {
				return p.errf(f.el.line, "field %q: format %q: bits 0 to %d (the %d bits of %s) expected, found bit %d (line %d)", f.name, what, bits-1, bits, f.typeName, n.V, n.Line)
			}
			continue
		}
		fits := true
		switch {
		case bits == 64 && signed:
			fits = n.Neg || n.V <= math.MaxInt64
		case bits == 64:
			fits = !n.Neg
		case n.Neg:
			fits = signed && int64(n.V) >= -(1<<(bits-1))
		case signed:
			fits = n.V < 1<<(bits-1)
		default:
			fits = n.V < 1<<bits
		}
		if !fits {
			lo, hi := "0", strconv.FormatUint(1<<bits-1, 10)
			switch {
			case signed && bits == 64:
				lo, hi = strconv.FormatInt(math.MinInt64, 10), strconv.FormatInt(math.MaxInt64, 10)
			case signed:
				lo, hi = strconv.FormatInt(-(1<<(bits-1)), 10), strconv.FormatInt(1<<(bits-1)-1, 10)
			case bits == 64:
				hi = strconv.FormatUint(math.MaxUint64, 10)
			}
			return p.errf(f.el.line, "field %q: format %q: values %s to %s (those of %s) expected, found %s (line %d)", f.name, what, lo, hi, f.typeName, n.number(), n.Line)
		}
	}
	return nil
}
