package tlv

// config.go reads TLV's configuration files into the model of model.go:
// resource files (.res), resource headers (.resh) and conversion rules
// (.cnv), all in TLV's lenient JSON (jsonc.go), and resolves the names a
// resource file gives (ConvertRules, ResourceHeaders) to rule sets and
// header sets found in the directories or files the user gives, then in
// the bundled defaults (bundled.go).

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/dlclark/regexp2"

	"github.com/traceduck/traceduck/schema"
)

// ConfigError is a problem in a configuration file, at a place in it:
// FILE:LINE:COL: in WHAT: message (the place is left out when unknown).
type ConfigError struct {
	Pos Pos
	In  string // what the place belongs to: rule "…", resource "TASK1"; may be empty
	Msg string
}

func (e *ConfigError) Error() string {
	var b strings.Builder
	b.WriteString(e.Pos.File)
	if e.Pos.Line > 0 {
		fmt.Fprintf(&b, ":%d:%d", e.Pos.Line, e.Pos.Col)
	}
	b.WriteString(": ")
	if e.In != "" {
		b.WriteString("in ")
		b.WriteString(e.In)
		b.WriteString(": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

// MaxConfigSize bounds a resource, resource header or conversion rule
// file: each is read whole into memory (TLV's own are a few KiB).
const MaxConfigSize = 16 << 20

// readConfig reads a configuration file of at most MaxConfigSize bytes;
// what names the kind of file in the message of a larger one.
func readConfig(path, what string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxConfigSize+1))
	if err != nil {
		return nil, err
	}
	if len(data) > MaxConfigSize {
		return nil, &ConfigError{Pos: Pos{File: path}, Msg: fmt.Sprintf("expected %s of at most %d bytes, found a larger file", what, MaxConfigSize)}
	}
	return data, nil
}

// cfgKeyMax is how many characters of a key (a rule pattern, mostly) a
// message quotes.
const cfgKeyMax = 40

// cfgQuote quotes a key for a message, cut to cfgKeyMax characters.
func cfgQuote(s string) string {
	if utf8.RuneCountInString(s) > cfgKeyMax {
		r := []rune(s)
		s = string(r[:cfgKeyMax]) + "..."
	}
	return `"` + s + `"`
}

// ---------------------------------------------------------------------
// JSON walking helpers

// cfgWalker reads one parsed file.
type cfgWalker struct {
	doc *jcDoc
}

func (w *cfgWalker) errorf(off int, in, key, format string, args ...any) error {
	return w.doc.errorf(off, in, key, format, args...)
}

// object checks that v is an object.
func (w *cfgWalker) object(v *jcValue, in, key, what string) error {
	if v.Kind != jcObject {
		return w.errorf(v.Off, in, key, "%sexpected an object, found %s", what, v.Kind.name())
	}
	return nil
}

// noDuplicates reports the second of two members with the same key.
func (w *cfgWalker) noDuplicates(v *jcValue, in, what string) error {
	seen := make(map[string]bool, len(v.Members))
	for _, m := range v.Members {
		if seen[m.Key] {
			return w.errorf(m.KeyOff, in, m.Key, "%s %s given twice", what, cfgQuote(m.Key))
		}
		seen[m.Key] = true
	}
	return nil
}

// str reads a string member (numbers and true/false are taken as written).
func (w *cfgWalker) str(v *jcValue, in, key, name string) (string, error) {
	switch v.Kind {
	case jcString, jcNumber, jcBool:
		return v.Text, nil
	case jcNull:
		return "", nil
	}
	return "", w.errorf(v.Off, in, key, "%s: expected a string, found %s", name, v.Kind.name())
}

// names reads a list of names: a list of strings or one string; empty
// names ("" in ConvertRules means none) are dropped. offs are the offsets
// of the names kept.
func (w *cfgWalker) names(v *jcValue, name string) (names []string, offs []int, err error) {
	add := func(e *jcValue) error {
		if e.Kind == jcNull {
			return nil
		}
		if e.Kind != jcString {
			return w.errorf(e.Off, "", name, "%s: expected a name (a string), found %s", name, e.Kind.name())
		}
		if s := strings.TrimSpace(e.Text); s != "" {
			names = append(names, s)
			offs = append(offs, e.Off)
		}
		return nil
	}
	switch v.Kind {
	case jcArray:
		for _, e := range v.Elems {
			if err := add(e); err != nil {
				return nil, nil, err
			}
		}
	case jcString, jcNull:
		if err := add(v); err != nil {
			return nil, nil, err
		}
	default:
		return nil, nil, w.errorf(v.Off, "", name, "%s: expected a list of names, found %s", name, v.Kind.name())
	}
	return names, offs, nil
}

// scalar reads an attribute value; what names it in messages.
func (w *cfgWalker) scalar(v *jcValue, name, in, what string) (Value, error) {
	val := Value{Name: name, Text: v.Text}
	switch v.Kind {
	case jcString:
		val.Kind = KindString
	case jcNumber:
		val.Kind = KindNumber
	case jcBool:
		val.Kind = KindBool
	case jcNull:
		val.Kind = KindNull
		val.Text = ""
	default:
		return val, w.errorf(v.Off, in, name, "%s: expected a string, a number, true/false or null, found %s", what, v.Kind.name())
	}
	return val, nil
}

// cfgBool reads true/false (also as the strings "true"/"false").
func (w *cfgWalker) boolean(v *jcValue, in, key, name string) (bool, error) {
	switch {
	case v.Kind == jcBool:
		return v.Text == "true", nil
	case v.Kind == jcString && strings.EqualFold(v.Text, "true"):
		return true, nil
	case v.Kind == jcString && strings.EqualFold(v.Text, "false"), v.Kind == jcNull:
		return false, nil
	}
	return false, w.errorf(v.Off, in, key, "%s: expected true or false, found %s", name, v.Kind.name())
}

// ---------------------------------------------------------------------
// Resource files

// resPlaces keeps where the names and attributes of a resource file
// stand, for the checks Load makes after the headers are known.
type resPlaces struct {
	doc         *jcDoc
	convertOffs []int
	headerOffs  []int
	typeOffs    []int   // per resource: offset of its Type value
	attrOffs    [][]int // per resource, per attribute: offset of the key
}

// LoadResourceFile reads a resource file (.res).
func LoadResourceFile(path string) (*ResourceFile, error) {
	data, err := readConfig(path, "a resource file")
	if err != nil {
		return nil, err
	}
	return ParseResourceFile(path, data)
}

// ParseResourceFile parses a resource file; name is used in messages and
// kept as Path. It reads TLV's resource files and the .res TLV saves in a
// project archive (.tlv), whose ResourceHeaders is an object of the
// resource types themselves (kept as EmbeddedTypes) and whose resources
// carry every attribute.
func ParseResourceFile(name string, data []byte) (*ResourceFile, error) {
	rf, _, err := parseResourceFile(name, data)
	return rf, err
}

func parseResourceFile(name string, data []byte) (*ResourceFile, *resPlaces, error) {
	if first := cfgFirstByte(data); first == '<' {
		return nil, nil, &ConfigError{Pos: Pos{File: name, Line: 1, Col: 1}, Msg: "not a TLV resource file in JSON: this is the XML resource format of early TLV versions, which traceduck does not read"}
	}
	if first := cfgFirstByte(data); first != '{' && first != '/' && first != 0 {
		line, _, _ := strings.Cut(strings.TrimLeft(strings.TrimPrefix(string(data[:min(len(data), 200)]), "\uFEFF"), " \t\r\n"), "\n")
		return nil, nil, &ConfigError{Pos: Pos{File: name, Line: 1, Col: 1}, Msg: fmt.Sprintf("not a TLV resource file: a resource file is a JSON object ({...}); this one starts with %s", cfgQuote(strings.TrimSpace(line)))}
	}
	doc, err := jcParse(name, data)
	if err != nil {
		return nil, nil, err
	}
	w := &cfgWalker{doc: doc}
	root := doc.Root
	if root.Kind != jcObject {
		return nil, nil, w.errorf(root.Off, "", "", "a resource file is a JSON object ({...}), found %s", root.Kind.name())
	}
	if err := w.noDuplicates(root, "", "key"); err != nil {
		return nil, nil, err
	}
	rf := &ResourceFile{Path: name, TimeRadix: 10}
	pl := &resPlaces{doc: doc}
	for _, m := range root.Members {
		v := m.Value
		switch m.Key {
		case "TimeScale":
			s, err := w.str(v, "", m.Key, "TimeScale")
			if err != nil {
				return nil, nil, err
			}
			if _, err := LookupTimeUnit(s); err != nil {
				return nil, nil, w.errorf(v.Off, "", m.Key, "%v", err)
			}
			rf.TimeScale = strings.TrimSpace(s)
		case "TimeRadix":
			s, err := w.str(v, "", m.Key, "TimeRadix")
			if err != nil {
				return nil, nil, err
			}
			r, err := strconv.Atoi(strings.TrimSpace(s))
			if err != nil || r < 2 || r > 36 {
				return nil, nil, w.errorf(v.Off, "", m.Key, "TimeRadix: expected 10, 16, 8 or 2 (any base from 2 to 36), found %s", s)
			}
			rf.TimeRadix = r
		case "ConvertRules":
			rf.ConvertRulesSet = true
			if rf.ConvertRules, pl.convertOffs, err = w.names(v, m.Key); err != nil {
				return nil, nil, err
			}
		case "VisualizeRules":
			if rf.VisualizeRules, _, err = w.names(v, m.Key); err != nil {
				return nil, nil, err
			}
		case "ResourceHeaders":
			if v.Kind == jcObject {
				// A saved project's .res: the types themselves.
				if rf.EmbeddedTypes, err = w.types(v, ""); err != nil {
					return nil, nil, err
				}
				break
			}
			if rf.ResourceHeaders, pl.headerOffs, err = w.names(v, m.Key); err != nil {
				return nil, nil, err
			}
		case "Resources":
			if err := w.resources(v, rf, pl); err != nil {
				return nil, nil, err
			}
		}
		// Other keys (Path, StatisticsGenerationRules, ...) are TLV's own.
	}
	return rf, pl, nil
}

func (w *cfgWalker) resources(v *jcValue, rf *ResourceFile, pl *resPlaces) error {
	if v.Kind == jcNull {
		return nil
	}
	if err := w.object(v, "", "Resources", "Resources: "); err != nil {
		return err
	}
	if err := w.noDuplicates(v, "", "resource"); err != nil {
		return err
	}
	for _, m := range v.Members {
		in := "resource " + cfgQuote(m.Key)
		if strings.TrimSpace(m.Key) == "" {
			return w.errorf(m.KeyOff, "", m.Key, "a resource without a name")
		}
		if err := w.object(m.Value, in, m.Key, ""); err != nil {
			return err
		}
		if err := w.noDuplicates(m.Value, in, "key"); err != nil {
			return err
		}
		r := Resource{Name: m.Key, Pos: w.doc.pos(m.KeyOff, m.Key)}
		typeOff := -1
		var attrOffs []int
		for _, f := range m.Value.Members {
			switch f.Key {
			case "Type":
				s, err := w.str(f.Value, in, m.Key, "Type")
				if err != nil {
					return err
				}
				r.Type = strings.TrimSpace(s)
				typeOff = f.Value.Off
			case "Attributes":
				a := f.Value
				if a.Kind == jcNull {
					continue
				}
				if err := w.object(a, in, m.Key, "Attributes: "); err != nil {
					return err
				}
				if err := w.noDuplicates(a, in, "attribute"); err != nil {
					return err
				}
				for _, am := range a.Members {
					val, err := w.scalar(am.Value, am.Key, in, "attribute "+cfgQuote(am.Key))
					if err != nil {
						return err
					}
					r.Attributes = append(r.Attributes, val)
					attrOffs = append(attrOffs, am.KeyOff)
				}
			}
			// Color, DisplayName, Visible: for TLV's screen.
		}
		if typeOff < 0 || r.Type == "" {
			return w.errorf(m.KeyOff, in, m.Key, "no Type")
		}
		rf.Resources = append(rf.Resources, r)
		pl.typeOffs = append(pl.typeOffs, typeOff)
		pl.attrOffs = append(pl.attrOffs, attrOffs)
	}
	return nil
}

// cfgFirstByte returns the first byte after a byte order mark and white space.
func cfgFirstByte(data []byte) byte {
	s := strings.TrimLeft(strings.TrimPrefix(string(data[:min(len(data), 4096)]), "\uFEFF"), " \t\r\n")
	if s == "" {
		return 0
	}
	return s[0]
}

// parseSets parses a file whose top level is an object of named sets
// (resource headers, conversion rules) without duplicate names.
func parseSets(name string, data []byte, file, set string) (*cfgWalker, *jcValue, error) {
	doc, err := jcParse(name, data)
	if err != nil {
		return nil, nil, err
	}
	w := &cfgWalker{doc: doc}
	root := doc.Root
	if root.Kind != jcObject {
		return nil, nil, w.errorf(root.Off, "", "", "%s is a JSON object of %ss ({\"asp\": {...}}), found %s", file, set, root.Kind.name())
	}
	if err := w.noDuplicates(root, "", set); err != nil {
		return nil, nil, err
	}
	return w, root, nil
}

// ---------------------------------------------------------------------
// Resource headers

// LoadHeaders reads a resource header file (.resh).
func LoadHeaders(path string) ([]HeaderSet, error) {
	data, err := readConfig(path, "a resource header file")
	if err != nil {
		return nil, err
	}
	return ParseHeaders(path, data)
}

// ParseHeaders parses a resource header file: set name → type name →
// DisplayName, Attributes (name → VariableType, DisplayName,
// AllocationType, CanGrouping, Default) and Behaviors (name →
// DisplayName, Arguments: name → type, in order). Keys TLV uses for its
// screen only (Color) are ignored.
func ParseHeaders(name string, data []byte) ([]HeaderSet, error) {
	w, root, err := parseSets(name, data, "a resource header file", "header set")
	if err != nil {
		return nil, err
	}
	var sets []HeaderSet
	for _, m := range root.Members {
		in := "header set " + cfgQuote(m.Key)
		if err := w.object(m.Value, in, m.Key, ""); err != nil {
			return nil, err
		}
		types, err := w.types(m.Value, m.Key)
		if err != nil {
			return nil, err
		}
		sets = append(sets, HeaderSet{Name: m.Key, Types: types})
	}
	return sets, nil
}

// types reads an object of resource types.
func (w *cfgWalker) types(v *jcValue, set string) ([]*ResourceType, error) {
	if err := w.noDuplicates(v, "", "resource type"); err != nil {
		return nil, err
	}
	var out []*ResourceType
	for _, m := range v.Members {
		in := "type " + cfgQuote(m.Key)
		if strings.TrimSpace(m.Key) == "" {
			return nil, w.errorf(m.KeyOff, "", m.Key, "a resource type without a name")
		}
		if err := w.object(m.Value, in, m.Key, ""); err != nil {
			return nil, err
		}
		if err := w.noDuplicates(m.Value, in, "key"); err != nil {
			return nil, err
		}
		t := &ResourceType{Name: m.Key, Pos: w.doc.pos(m.KeyOff, m.Key)}
		var cpu, waits, prio *jcValue
		for _, f := range m.Value.Members {
			var err error
			switch f.Key {
			case "DisplayName":
				t.DisplayName, err = w.str(f.Value, in, m.Key, "DisplayName")
			case "Attributes":
				t.Attributes, err = w.attributeDefs(f.Value, in, m.Key)
			case "Behaviors":
				t.Behaviors, err = w.behaviorDefs(f.Value, in, m.Key)
			case "CPU":
				cpu = f.Value // read once the attributes are known
			case "Waits":
				waits = f.Value // also
			case "Priority":
				prio = f.Value // also
			}
			if err != nil {
				return nil, err
			}
		}
		if cpu != nil {
			var err error
			if t.CPU, err = w.cpuDef(cpu, in, m.Key, t); err != nil {
				return nil, err
			}
		}
		if waits != nil {
			var err error
			if t.Waits, err = w.waitsDef(waits, in, m.Key, t); err != nil {
				return nil, err
			}
		}
		if prio != nil {
			var err error
			if t.Priority, err = w.priorityDef(prio, in, m.Key, t); err != nil {
				return nil, err
			}
		}
		out = append(out, t)
	}
	return out, nil
}

// cpuDef reads traceduck's key "CPU" of a resource type (README.md, "The
// CPU model"): Role (required), Attribute, Running, Processor, Idle; the
// attributes it names are attributes of t.
func (w *cfgWalker) cpuDef(v *jcValue, in, key string, t *ResourceType) (*CPUDef, error) {
	if err := w.object(v, in, key, "CPU: "); err != nil {
		return nil, err
	}
	if err := w.noDuplicates(v, in, "CPU key"); err != nil {
		return nil, err
	}
	d := &CPUDef{Pos: w.doc.pos(v.Off, key)}
	role := -1
	for i, f := range v.Members {
		var err error
		switch f.Key {
		case "Role":
			if f.Value.Kind != jcString {
				return nil, w.errorf(f.Value.Off, in, key, "CPU: Role: expected task, interrupt, idle or none, found %s", f.Value.Kind.name())
			}
			switch f.Value.Text {
			case "task", "interrupt", "idle", "none":
				d.Role, role = f.Value.Text, i
			default:
				return nil, w.errorf(f.Value.Off, in, key, "CPU: Role: expected task, interrupt, idle or none, found %q", f.Value.Text)
			}
		case "Attribute", "Processor":
			if f.Value.Kind != jcString || strings.TrimSpace(f.Value.Text) == "" {
				return nil, w.errorf(f.Value.Off, in, key, "CPU: %s: expected the name of an attribute of the type, found %s", f.Key, cfgWhat(f.Value))
			}
			name := strings.TrimSpace(f.Value.Text)
			a := t.attribute(name)
			if a == nil {
				var names []string
				for _, x := range t.Attributes {
					names = append(names, x.Name)
				}
				have := "it has none"
				if len(names) > 0 {
					have = "it has " + strings.Join(names, ", ")
				}
				return nil, w.errorf(f.Value.Off, in, key, "CPU: %s %s: the type declares no such attribute (%s)", f.Key, cfgQuote(name), have)
			}
			if f.Key == "Attribute" {
				if strings.EqualFold(a.AllocationType, "Static") {
					return nil, w.errorf(f.Value.Off, in, key, "CPU: Attribute %s is Static: the trace never changes it, so it cannot say when a resource runs", cfgQuote(name))
				}
				d.Attribute = name
			} else {
				d.Processor = name
			}
		case "Running":
			d.Running, err = w.cpuValues(f.Value, in, key)
		case "Idle":
			var offs []int
			d.Idle, offs, err = w.names(f.Value, "CPU: Idle")
			for j, p := range d.Idle {
				if _, gerr := schema.GlobRegexp(p); gerr != nil {
					return nil, w.errorf(offs[j], in, key, "CPU: Idle: %v", gerr)
				}
			}
		default:
			return nil, w.errorf(f.KeyOff, in, key, "CPU: unknown key %s (expected Role, Attribute, Running, Processor or Idle)", cfgQuote(f.Key))
		}
		if err != nil {
			return nil, err
		}
	}
	if role < 0 {
		return nil, w.errorf(v.Off, in, key, "CPU: no Role (task, interrupt, idle or none)")
	}
	for _, f := range v.Members {
		switch {
		case d.Role == "none" && f.Key != "Role":
			return nil, w.errorf(f.KeyOff, in, key, "CPU: %s: a type of Role none holds no processor and takes no other key", f.Key)
		case f.Key == "Idle" && d.Role != "task":
			return nil, w.errorf(f.KeyOff, in, key, "CPU: Idle names idle tasks among the resources of a type of Role task, not %s", d.Role)
		}
	}
	if d.Attribute == "" && d.Role != "none" && t.attribute("state") == nil {
		return nil, w.errorf(v.Off, in, key, "CPU: no Attribute, and the type has no attribute \"state\" (the default): name the attribute whose value says it runs")
	}
	return d, nil
}

// priorityDef reads traceduck's key "Priority" of a resource type
// (README.md, "Priorities"): Attribute (a Number attribute of t) and Order
// (lower_first or higher_first), both required.
func (w *cfgWalker) priorityDef(v *jcValue, in, key string, t *ResourceType) (*PriorityDef, error) {
	if err := w.object(v, in, key, "Priority: "); err != nil {
		return nil, err
	}
	if err := w.noDuplicates(v, in, "Priority key"); err != nil {
		return nil, err
	}
	d := &PriorityDef{Pos: w.doc.pos(v.Off, key)}
	order := false
	for _, f := range v.Members {
		switch f.Key {
		case "Attribute":
			if f.Value.Kind != jcString || strings.TrimSpace(f.Value.Text) == "" {
				return nil, w.errorf(f.Value.Off, in, key, "Priority: Attribute: expected the name of an attribute of the type, found %s", cfgWhat(f.Value))
			}
			name := strings.TrimSpace(f.Value.Text)
			a := t.attribute(name)
			if a == nil {
				return nil, w.errorf(f.Value.Off, in, key, "Priority: Attribute %s: the type declares no such attribute", cfgQuote(name))
			}
			if !strings.EqualFold(a.VariableType, "Number") {
				return nil, w.errorf(f.Value.Off, in, key, "Priority: Attribute %s: expected a Number attribute, found VariableType %s", cfgQuote(name), cfgQuote(a.VariableType))
			}
			d.Attribute = name
		case "Order":
			if f.Value.Kind != jcString {
				return nil, w.errorf(f.Value.Off, in, key, "Priority: Order: expected lower_first or higher_first, found %s", cfgWhat(f.Value))
			}
			if f.Value.Text != "lower_first" && f.Value.Text != "higher_first" {
				return nil, w.errorf(f.Value.Off, in, key, "Priority: Order: expected lower_first or higher_first, found %q", f.Value.Text)
			}
			d.LowerFirst, order = f.Value.Text == "lower_first", true
		default:
			return nil, w.errorf(f.KeyOff, in, key, "Priority: unknown key %s (expected Attribute or Order)", cfgQuote(f.Key))
		}
	}
	if d.Attribute == "" || !order {
		return nil, w.errorf(v.Off, in, key, "Priority: expected Attribute and Order (lower_first or higher_first)")
	}
	return d, nil
}

// waitsDef reads traceduck's key "Waits" of a resource type (README.md,
// "Waits for kernel objects"): Enter, Leave, Blocked, Granted and Calls
// (required), Attribute; the behaviors and the attribute it names are the
// type's.
func (w *cfgWalker) waitsDef(v *jcValue, in, key string, t *ResourceType) (*WaitsDef, error) {
	if err := w.object(v, in, key, "Waits: "); err != nil {
		return nil, err
	}
	if err := w.noDuplicates(v, in, "Waits key"); err != nil {
		return nil, err
	}
	d := &WaitsDef{Pos: w.doc.pos(v.Off, key)}
	text := func(f jcMember) (string, error) {
		if f.Value.Kind != jcString || strings.TrimSpace(f.Value.Text) == "" {
			return "", w.errorf(f.Value.Off, in, key, "Waits: %s: expected a name (a string), found %s", f.Key, cfgWhat(f.Value))
		}
		return strings.TrimSpace(f.Value.Text), nil
	}
	for _, f := range v.Members {
		var err error
		switch f.Key {
		case "Enter", "Leave":
			var name string
			if name, err = text(f); err != nil {
				return nil, err
			}
			found := false
			for _, b := range t.Behaviors {
				found = found || b.Name == name
			}
			if !found {
				return nil, w.errorf(f.Value.Off, in, key, "Waits: %s %s: the type declares no such behavior", f.Key, cfgQuote(name))
			}
			if f.Key == "Enter" {
				d.Enter = name
			} else {
				d.Leave = name
			}
		case "Attribute":
			var name string
			if name, err = text(f); err != nil {
				return nil, err
			}
			a := t.attribute(name)
			if a == nil {
				return nil, w.errorf(f.Value.Off, in, key, "Waits: Attribute %s: the type declares no such attribute", cfgQuote(name))
			}
			if strings.EqualFold(a.AllocationType, "Static") {
				return nil, w.errorf(f.Value.Off, in, key, "Waits: Attribute %s is Static: the trace never changes it, so it cannot say when a resource blocks", cfgQuote(name))
			}
			d.Attribute = name
		case "Granted":
			d.Granted, err = text(f)
		case "Blocked":
			if f.Value.Kind != jcArray || len(f.Value.Elems) == 0 {
				return nil, w.errorf(f.Value.Off, in, key, "Waits: Blocked: expected a list of the values that mean blocked, found %s", cfgWhat(f.Value))
			}
			for _, e := range f.Value.Elems {
				if (e.Kind != jcString && e.Kind != jcNumber && e.Kind != jcBool) || e.Text == "" {
					return nil, w.errorf(e.Off, in, key, "Waits: Blocked: expected a value (a string, a number or true/false), found %s", cfgWhat(e))
				}
				d.Blocked = append(d.Blocked, e.Text)
			}
		case "Calls":
			d.Calls, err = w.waitCalls(f.Value, in, key)
		default:
			return nil, w.errorf(f.KeyOff, in, key, "Waits: unknown key %s (expected Enter, Leave, Attribute, Blocked, Granted or Calls)", cfgQuote(f.Key))
		}
		if err != nil {
			return nil, err
		}
	}
	for _, need := range []struct {
		name string
		ok   bool
	}{{"Enter", d.Enter != ""}, {"Leave", d.Leave != ""}, {"Blocked", d.Blocked != nil}, {"Granted", d.Granted != ""}, {"Calls", d.Calls != nil}} {
		if !need.ok {
			return nil, w.errorf(v.Off, in, key, "Waits: no %s", need.name)
		}
	}
	if d.Attribute == "" && t.attribute("state") == nil {
		return nil, w.errorf(v.Off, in, key, "Waits: no Attribute, and the type has no attribute \"state\" (the default): name the attribute whose value says it is blocked")
	}
	return d, nil
}

// waitCalls reads the key Calls of Waits: an object of calls, each
// {"Object": ARGUMENT, "Kind": KIND}.
func (w *cfgWalker) waitCalls(v *jcValue, in, key string) ([]WaitCall, error) {
	if v.Kind != jcObject || len(v.Members) == 0 {
		return nil, w.errorf(v.Off, in, key, "Waits: Calls: expected an object of calls ({\"wai_sem\": {\"Object\": \"semid\", \"Kind\": \"semaphore\"}}), found %s", cfgWhat(v))
	}
	if err := w.noDuplicates(v, in, "Waits call"); err != nil {
		return nil, err
	}
	var out []WaitCall
	for _, m := range v.Members {
		if m.Value.Kind != jcObject {
			return nil, w.errorf(m.Value.Off, in, key, "Waits: Calls: %s: expected {\"Object\": ARGUMENT, \"Kind\": KIND}, found %s", cfgQuote(m.Key), cfgWhat(m.Value))
		}
		c := WaitCall{Name: m.Key}
		for _, f := range m.Value.Members {
			if f.Value.Kind != jcString || strings.TrimSpace(f.Value.Text) == "" {
				return nil, w.errorf(f.Value.Off, in, key, "Waits: Calls: %s: %s: expected a name (a string), found %s", cfgQuote(m.Key), f.Key, cfgWhat(f.Value))
			}
			switch f.Key {
			case "Object":
				c.Object = strings.TrimSpace(f.Value.Text)
			case "Kind":
				c.Kind = strings.TrimSpace(f.Value.Text)
			default:
				return nil, w.errorf(f.KeyOff, in, key, "Waits: Calls: %s: unknown key %s (expected Object or Kind)", cfgQuote(m.Key), cfgQuote(f.Key))
			}
		}
		if c.Object == "" || c.Kind == "" {
			return nil, w.errorf(m.Value.Off, in, key, "Waits: Calls: %s: expected both Object (the argument that numbers the object) and Kind", cfgQuote(m.Key))
		}
		out = append(out, c)
	}
	return out, nil
}

// cpuValues reads the key Running: a non-empty list of values (strings,
// numbers or true/false, as written).
func (w *cfgWalker) cpuValues(v *jcValue, in, key string) ([]string, error) {
	if v.Kind != jcArray || len(v.Elems) == 0 {
		return nil, w.errorf(v.Off, in, key, "CPU: Running: expected a list of the values that mean running, found %s", cfgWhat(v))
	}
	var out []string
	for _, e := range v.Elems {
		if (e.Kind != jcString && e.Kind != jcNumber && e.Kind != jcBool) || e.Text == "" {
			return nil, w.errorf(e.Off, in, key, "CPU: Running: expected a value (a string, a number or true/false), found %s", cfgWhat(e))
		}
		out = append(out, e.Text)
	}
	return out, nil
}

// cfgWhat names a JSON value in a message: an empty string as such.
func cfgWhat(v *jcValue) string {
	if v.Kind == jcString && strings.TrimSpace(v.Text) == "" {
		return "an empty string"
	}
	if v.Kind == jcArray && len(v.Elems) == 0 {
		return "an empty list"
	}
	if v.Kind == jcObject && len(v.Members) == 0 {
		return "an empty object"
	}
	return v.Kind.name()
}

func (w *cfgWalker) attributeDefs(v *jcValue, in, key string) ([]AttributeDef, error) {
	if v.Kind == jcNull {
		return nil, nil
	}
	if err := w.object(v, in, key, "Attributes: "); err != nil {
		return nil, err
	}
	if err := w.noDuplicates(v, in, "attribute"); err != nil {
		return nil, err
	}
	var out []AttributeDef
	for _, m := range v.Members {
		ain := in + " attribute " + cfgQuote(m.Key)
		if err := w.object(m.Value, ain, key, ""); err != nil {
			return nil, err
		}
		a := AttributeDef{Name: m.Key, VariableType: "String"}
		for _, f := range m.Value.Members {
			var err error
			switch f.Key {
			case "VariableType":
				a.VariableType, err = w.str(f.Value, ain, key, "VariableType")
			case "DisplayName":
				a.DisplayName, err = w.str(f.Value, ain, key, "DisplayName")
			case "AllocationType":
				a.AllocationType, err = w.str(f.Value, ain, key, "AllocationType")
			case "CanGrouping":
				a.CanGrouping, err = w.boolean(f.Value, ain, key, "CanGrouping")
			case "Default":
				if f.Value.Kind == jcNull {
					break // TLV's saved projects write "Default": null
				}
				var d Value
				d, err = w.scalar(f.Value, m.Key, ain, "Default")
				a.Default = &d
			}
			if err != nil {
				return nil, err
			}
		}
		out = append(out, a)
	}
	return out, nil
}

func (w *cfgWalker) behaviorDefs(v *jcValue, in, key string) ([]BehaviorDef, error) {
	if v.Kind == jcNull {
		return nil, nil
	}
	if err := w.object(v, in, key, "Behaviors: "); err != nil {
		return nil, err
	}
	if err := w.noDuplicates(v, in, "behavior"); err != nil {
		return nil, err
	}
	var out []BehaviorDef
	for _, m := range v.Members {
		bin := in + " behavior " + cfgQuote(m.Key)
		if err := w.object(m.Value, bin, key, ""); err != nil {
			return nil, err
		}
		b := BehaviorDef{Name: m.Key}
		for _, f := range m.Value.Members {
			switch f.Key {
			case "DisplayName":
				s, err := w.str(f.Value, bin, key, "DisplayName")
				if err != nil {
					return nil, err
				}
				b.DisplayName = s
			case "Arguments":
				args, err := w.argumentDefs(f.Value, bin, key)
				if err != nil {
					return nil, err
				}
				b.Arguments = args
			}
		}
		out = append(out, b)
	}
	return out, nil
}

// argumentDefs reads Arguments: an object name → type, in order (TLV's
// form), or a list of names (of type String).
func (w *cfgWalker) argumentDefs(v *jcValue, in, key string) ([]ArgumentDef, error) {
	var out []ArgumentDef
	switch v.Kind {
	case jcNull:
		return nil, nil
	case jcObject:
		if err := w.noDuplicates(v, in, "argument"); err != nil {
			return nil, err
		}
		for _, m := range v.Members {
			t, err := w.str(m.Value, in, key, "argument "+cfgQuote(m.Key))
			if err != nil {
				return nil, err
			}
			out = append(out, ArgumentDef{Name: m.Key, Type: t})
		}
	case jcArray:
		for _, e := range v.Elems {
			if e.Kind != jcString {
				return nil, w.errorf(e.Off, in, key, "Arguments: expected a name (a string), found %s", e.Kind.name())
			}
			out = append(out, ArgumentDef{Name: e.Text, Type: "String"})
		}
	default:
		return nil, w.errorf(v.Off, in, key, "Arguments: expected an object (name: type), found %s", v.Kind.name())
	}
	return out, nil
}

// ---------------------------------------------------------------------
// Conversion rules

// LoadRules reads a conversion rule file (.cnv).
func LoadRules(path string) ([]RuleSet, error) {
	data, err := readConfig(path, "a conversion rule file")
	if err != nil {
		return nil, err
	}
	return ParseRules(path, data)
}

// ParseRules parses a conversion rule file: set name → rules in file
// order, each a .NET regular expression → its output: a standard-format
// line template (a string), a list of templates and conditional blocks,
// or one conditional block (an object: condition → output, recursively).
// Every pattern is compiled with regexp2, so that a bad one is an error
// here, at its place. A set whose "$STYLE" is "script" (TLV ran a program
// instead) is returned with Style "script" and no rules.
func ParseRules(name string, data []byte) ([]RuleSet, error) {
	w, root, err := parseSets(name, data, "a conversion rule file", "rule set")
	if err != nil {
		return nil, err
	}
	var sets []RuleSet
	for _, m := range root.Members {
		set, err := w.ruleSet(m)
		if err != nil {
			return nil, err
		}
		sets = append(sets, set)
	}
	return sets, nil
}

func (w *cfgWalker) ruleSet(m jcMember) (RuleSet, error) {
	set := RuleSet{Name: m.Key}
	in := "rule set " + cfgQuote(m.Key)
	v := m.Value
	if err := w.object(v, in, m.Key, ""); err != nil {
		return set, err
	}
	if err := w.noDuplicates(v, in, "rule"); err != nil {
		return set, err
	}
	for _, r := range v.Members {
		if r.Key == "$STYLE" {
			s, err := w.str(r.Value, in, m.Key, "$STYLE")
			if err != nil {
				return set, err
			}
			set.Style = strings.TrimSpace(s)
			if set.Style != "script" && set.Style != "" && !strings.EqualFold(set.Style, "regex") {
				return set, w.errorf(r.Value.Off, in, m.Key, "$STYLE: unknown style %q", s)
			}
			if strings.EqualFold(set.Style, "regex") {
				set.Style = ""
			}
		}
	}
	if set.Style == "script" {
		return set, nil
	}
	for _, r := range v.Members {
		if r.Key == "$STYLE" {
			continue
		}
		rule, err := w.rule(r)
		if err != nil {
			return set, err
		}
		set.Rules = append(set.Rules, rule)
	}
	return set, nil
}

func (w *cfgWalker) rule(m jcMember) (Rule, error) {
	in := "rule " + cfgQuote(m.Key)
	rule := Rule{Pattern: m.Key, Pos: w.doc.pos(m.KeyOff, m.Key)}
	if m.Key == "" {
		return rule, w.errorf(m.KeyOff, "", "", "a rule with an empty pattern")
	}
	if _, err := regexp2.Compile(m.Key, regexp2.None); err != nil {
		return rule, w.errorf(m.KeyOff, in, m.Key, "invalid regular expression: %s", strings.TrimPrefix(err.Error(), "error parsing regexp: "))
	}
	outs, err := w.outputs(m.Value, in, m.Key, 0)
	if err != nil {
		return rule, err
	}
	rule.Outputs = outs
	return rule, nil
}

// outputs reads what a rule or a condition outputs.
func (w *cfgWalker) outputs(v *jcValue, in, key string, depth int) ([]Output, error) {
	switch v.Kind {
	case jcString:
		if v.Text == "" {
			return nil, nil
		}
		return []Output{{Template: v.Text, Pos: w.doc.pos(v.Off, key)}}, nil
	case jcObject:
		o, err := w.block(v, in, key, depth)
		if err != nil {
			return nil, err
		}
		return []Output{o}, nil
	case jcArray:
		var outs []Output
		for _, e := range v.Elems {
			switch e.Kind {
			case jcString:
				if e.Text != "" {
					outs = append(outs, Output{Template: e.Text, Pos: w.doc.pos(e.Off, key)})
				}
			case jcObject:
				o, err := w.block(e, in, key, depth)
				if err != nil {
					return nil, err
				}
				outs = append(outs, o)
			case jcArray: // a list in a list: its elements, in place
				more, err := w.outputs(e, in, key, depth)
				if err != nil {
					return nil, err
				}
				outs = append(outs, more...)
			default:
				return nil, w.errorf(e.Off, in, key, "expected a string or an object, found %s", e.Kind.name())
			}
		}
		return outs, nil
	}
	return nil, w.errorf(v.Off, in, key, "expected a string, a list or an object, found %s", v.Kind.name())
}

// block reads a conditional block: condition → output, in file order.
func (w *cfgWalker) block(v *jcValue, in, key string, depth int) (Output, error) {
	o := Output{Pos: w.doc.pos(v.Off, key), Cond: []Case{}}
	if err := w.noDuplicates(v, in, "condition"); err != nil {
		return o, err
	}
	for _, m := range v.Members {
		if strings.TrimSpace(m.Key) == "" {
			return o, w.errorf(m.KeyOff, in, key, "an empty condition")
		}
		outs, err := w.outputs(m.Value, in, key, depth+1)
		if err != nil {
			return o, err
		}
		o.Cond = append(o.Cond, Case{Condition: m.Key, Outputs: outs, Pos: w.doc.pos(m.KeyOff, key)})
	}
	return o, nil
}

// ---------------------------------------------------------------------
// Config

// Config is what a TLV ingest needs: the resource file, the resource types
// its headers declare, and the conversion rules its ConvertRules names (none
// for a log already in the standard format).
type Config struct {
	Res *ResourceFile
	// Headers are the header sets used, in the order the resource file names
	// them; a saved project's embedded types come first, as set "".
	Headers []HeaderSet
	// Types are the resource types by name. When two header sets declare
	// the same type, the later one is used (and a warning says so).
	Types map[string]*ResourceType
	// RuleSets are the rule sets used, in the order the resource file names
	// them; Rules are their rules, one after the other.
	RuleSets []RuleSet
	Rules    []Rule
	// Sources says where each set was found: "rules asp" or "headers asp"
	// → a path, or "bundled:asp.cnv".
	Sources map[string]string
	// Warnings are findings that do not stop an ingest: an attribute of a
	// resource that its type does not declare, a value that does not match
	// its attribute's type, a type declared twice.
	Warnings []*ConfigError
}

// Converts reports whether the log has to be converted by rules (false
// when it is in the standard format already).
func (c *Config) Converts() bool { return len(c.RuleSets) > 0 }

// InitialAttributes returns the attributes a resource starts with: the
// values its resource file gives, in file order, then the Default of every
// attribute its type declares that the file does not give, in header order.
func (c *Config) InitialAttributes(r *Resource) []Value {
	out := append([]Value(nil), r.Attributes...)
	t := c.Types[r.Type]
	if t == nil {
		return out
	}
	for _, a := range t.Attributes {
		if a.Default == nil {
			continue
		}
		given := false
		for _, v := range r.Attributes {
			if v.Name == a.Name {
				given = true
				break
			}
		}
		if !given {
			d := *a.Default
			d.Name = a.Name
			out = append(out, d)
		}
	}
	return out
}

// Options says where Load looks for the sets a resource file names.
type Options struct {
	// RulePaths and HeaderPaths are directories or files, searched in
	// order before the bundled sets (--rules, --headers). In a directory
	// a set NAME is looked for in NAME.cnv (NAME.resh), then in every
	// .cnv (.resh) file of it; TLV's own layout, with convertRules/ and
	// resourceHeaders/ under one directory, is looked into too.
	RulePaths   []string
	HeaderPaths []string
	// DefaultRules and DefaultHeaders are used when the resource file
	// names no rule set (header set): the bundled "asp" for
	// --format toppers-asp, for instance. Without them, a resource file
	// that names none gets every set given in memory (RuleSets,
	// HeaderSets) and every set of the files (not directories) given.
	DefaultRules   []string
	DefaultHeaders []string
	// NoRules: the log is in the standard format already; the rule sets
	// the resource file names are not loaded.
	NoRules bool
	// RuleSets and HeaderSets are sets given in memory (a project
	// archive's own), searched before RulePaths and HeaderPaths.
	RuleSets   []RuleSet
	HeaderSets []HeaderSet
}

// Load reads a resource file and the rule sets and header sets it names,
// looked up in ruleDirs and headerDirs (directories or files) and then in
// the bundled sets.
func Load(resPath string, ruleDirs, headerDirs []string) (*Config, error) {
	return LoadOptions(resPath, Options{RulePaths: ruleDirs, HeaderPaths: headerDirs})
}

// LoadOptions is Load with all the options.
func LoadOptions(resPath string, opt Options) (*Config, error) {
	data, err := readConfig(resPath, "a resource file")
	if err != nil {
		return nil, err
	}
	rf, pl, err := parseResourceFile(resPath, data)
	if err != nil {
		return nil, err
	}
	return resolve(rf, pl, opt)
}

// NewConfig resolves a resource file read already (ParseResourceFile).
func NewConfig(res *ResourceFile, opt Options) (*Config, error) {
	return resolve(res, nil, opt)
}

// StandardConfig is the Config of a log in the standard format: no rules;
// the header sets res names (res may be nil: no resource file, every
// resource comes from the log; TimeScale "", radix 10).
func StandardConfig(res *ResourceFile, headerPaths []string) (*Config, error) {
	if res == nil {
		res = &ResourceFile{TimeRadix: 10}
	}
	return resolve(res, nil, Options{HeaderPaths: headerPaths, NoRules: true})
}

// ToppersConfig is the Config of --format toppers-asp and toppers-fmp:
// kernel is "asp" or "fmp", the bundled set used when the resource file
// names no rules or headers of its own.
func ToppersConfig(kernel, resPath string, rulePaths, headerPaths []string) (*Config, error) {
	return LoadOptions(resPath, Options{
		RulePaths: rulePaths, HeaderPaths: headerPaths,
		DefaultRules: []string{kernel}, DefaultHeaders: []string{kernel},
	})
}

func resolve(rf *ResourceFile, pl *resPlaces, opt Options) (*Config, error) {
	c := &Config{Res: rf, Types: map[string]*ResourceType{}, Sources: map[string]string{}}
	ld := &cfgLoader{rules: map[string][]RuleSet{}, headers: map[string][]HeaderSet{}, failed: map[string]error{}}

	// Where a name of the resource file stands, for messages.
	at := func(offs []int, i int, key string) Pos {
		if pl == nil || i >= len(offs) {
			return Pos{File: rf.Path, Key: key}
		}
		return pl.doc.pos(offs[i], key)
	}

	// Header sets.
	if len(rf.EmbeddedTypes) > 0 {
		c.Headers = append(c.Headers, HeaderSet{Name: "", Types: rf.EmbeddedTypes})
		c.Sources["headers (embedded)"] = rf.Path
	}
	headerNames, headerOffs := rf.ResourceHeaders, []int(nil)
	if pl != nil {
		headerOffs = pl.headerOffs
	}
	if len(headerNames) == 0 && len(rf.EmbeddedTypes) == 0 {
		headerNames, headerOffs = opt.DefaultHeaders, nil
		if len(headerNames) == 0 {
			for _, h := range opt.HeaderSets {
				headerNames = append(headerNames, h.Name)
			}
			headerNames = append(headerNames, ld.allSetsOfFiles(opt.HeaderPaths, ".resh")...)
		}
	}
	for i, name := range headerNames {
		set, src, err := ld.findHeaders(name, opt.HeaderPaths, opt.HeaderSets)
		if err != nil {
			return nil, cfgAt(err, at(headerOffs, i, name))
		}
		c.Headers = append(c.Headers, *set)
		c.Sources["headers "+name] = src
	}
	for _, h := range c.Headers {
		for _, t := range h.Types {
			if old := c.Types[t.Name]; old != nil {
				c.Warnings = append(c.Warnings, &ConfigError{Pos: t.Pos, In: "type " + cfgQuote(t.Name),
					Msg: fmt.Sprintf("declared again (first at %s:%d:%d); this declaration is used", old.Pos.File, old.Pos.Line, old.Pos.Col)})
			}
			c.Types[t.Name] = t
		}
	}

	// Rule sets. A resource file that says ConvertRules: [""] (TLV's way of
	// saying the log is in the standard format already) gets none, even
	// when --rules names files.
	if !opt.NoRules && !(rf.ConvertRulesSet && len(rf.ConvertRules) == 0) {
		ruleNames, ruleOffs := rf.ConvertRules, []int(nil)
		if pl != nil {
			ruleOffs = pl.convertOffs
		}
		if len(ruleNames) == 0 {
			ruleNames, ruleOffs = opt.DefaultRules, nil
			if len(ruleNames) == 0 {
				for _, r := range opt.RuleSets {
					ruleNames = append(ruleNames, r.Name)
				}
				ruleNames = append(ruleNames, ld.allSetsOfFiles(opt.RulePaths, ".cnv")...)
			}
		}
		for i, name := range ruleNames {
			set, src, err := ld.findRules(name, opt.RulePaths, opt.RuleSets)
			if err != nil {
				return nil, cfgAt(err, at(ruleOffs, i, name))
			}
			if set.Style == "script" {
				return nil, &ConfigError{Pos: at(ruleOffs, i, name), Msg: fmt.Sprintf(
					"rule set %q (%s) is a script rule set ($STYLE \"script\": TLV ran an external program to convert the log); traceduck does not run conversion scripts: convert the log to the standard format first, or give rules of regular expressions", name, src)}
			}
			c.RuleSets = append(c.RuleSets, *set)
			c.Rules = append(c.Rules, set.Rules...)
			c.Sources["rules "+name] = src
		}
	}

	// Every resource has a declared type; its attributes are declared.
	for i := range rf.Resources {
		r := &rf.Resources[i]
		in := "resource " + cfgQuote(r.Name)
		t := c.Types[r.Type]
		if t == nil {
			p := r.Pos
			if pl != nil && i < len(pl.typeOffs) {
				p = pl.doc.pos(pl.typeOffs[i], r.Name)
			}
			return nil, &ConfigError{Pos: p, In: in, Msg: fmt.Sprintf("unknown resource type %q (%s)", r.Type, c.declared())}
		}
		for j, a := range r.Attributes {
			p := r.Pos
			if pl != nil && i < len(pl.attrOffs) && j < len(pl.attrOffs[i]) {
				p = pl.doc.pos(pl.attrOffs[i][j], r.Name)
			}
			def := t.attribute(a.Name)
			if def == nil {
				c.Warnings = append(c.Warnings, &ConfigError{Pos: p, In: in,
					Msg: fmt.Sprintf("attribute %q is not declared by type %s", a.Name, t.Name)})
				continue
			}
			if strings.EqualFold(def.VariableType, "Number") && a.Kind == KindString {
				if _, err := strconv.ParseFloat(strings.TrimSpace(a.Text), 64); err != nil {
					c.Warnings = append(c.Warnings, &ConfigError{Pos: p, In: in,
						Msg: fmt.Sprintf("attribute %q is a Number, given %q", a.Name, a.Text)})
				}
			}
		}
	}
	return c, nil
}

// cfgAt places a lookup error at the name of the resource file it is
// about; an error of another file (a rule file that does not parse) keeps
// its own place.
func cfgAt(err error, p Pos) error {
	var ce *ConfigError
	if errors.As(err, &ce) {
		return err
	}
	return &ConfigError{Pos: p, Msg: err.Error()}
}

// attribute returns the declaration of an attribute, or nil.
func (t *ResourceType) attribute(name string) *AttributeDef {
	for i := range t.Attributes {
		if t.Attributes[i].Name == name {
			return &t.Attributes[i]
		}
	}
	return nil
}

// declared lists the declared types for a message.
func (c *Config) declared() string {
	if len(c.Types) == 0 {
		return "no resource header declares any type"
	}
	names := make([]string, 0, len(c.Types))
	for n := range c.Types {
		names = append(names, n)
	}
	sort.Strings(names)
	var sets []string
	for _, h := range c.Headers {
		if h.Name != "" {
			sets = append(sets, h.Name)
		} else {
			sets = append(sets, "the file itself")
		}
	}
	return "the headers " + strings.Join(sets, ", ") + " declare " + strings.Join(names, ", ")
}

// ---------------------------------------------------------------------
// Looking sets up

// cfgLoader finds rule sets and header sets, reading each file once.
type cfgLoader struct {
	rules   map[string][]RuleSet
	headers map[string][]HeaderSet
	failed  map[string]error
}

func (ld *cfgLoader) ruleFile(path string) ([]RuleSet, error) {
	if s, ok := ld.rules[path]; ok {
		return s, nil
	}
	if err := ld.failed[path]; err != nil {
		return nil, err
	}
	s, err := LoadRules(path)
	if err != nil {
		ld.failed[path] = err
		return nil, err
	}
	ld.rules[path] = s
	return s, nil
}

func (ld *cfgLoader) headerFile(path string) ([]HeaderSet, error) {
	if s, ok := ld.headers[path]; ok {
		return s, nil
	}
	if err := ld.failed[path]; err != nil {
		return nil, err
	}
	s, err := LoadHeaders(path)
	if err != nil {
		ld.failed[path] = err
		return nil, err
	}
	ld.headers[path] = s
	return s, nil
}

func (ld *cfgLoader) findRules(name string, paths []string, given []RuleSet) (*RuleSet, string, error) {
	return findSet(setKind[RuleSet]{
		what: "rule set", flag: "--rules", ext: ".cnv", sub: "convertRules",
		name: func(s *RuleSet) string { return s.Name }, file: ld.ruleFile,
		bundled: bundledRuleSet, bundledNames: bundledRuleNames,
	}, name, paths, given, ld.failed)
}

func (ld *cfgLoader) findHeaders(name string, paths []string, given []HeaderSet) (*HeaderSet, string, error) {
	return findSet(setKind[HeaderSet]{
		what: "header set", flag: "--headers", ext: ".resh", sub: "resourceHeaders",
		name: func(s *HeaderSet) string { return s.Name }, file: ld.headerFile,
		bundled: bundledHeaderSet, bundledNames: bundledHeaderNames,
	}, name, paths, given, ld.failed)
}

// setKind says how to find one kind of named set (rule sets, header sets).
type setKind[S any] struct {
	what, flag, ext, sub string // "rule set", "--rules", ".cnv", TLV's directory "convertRules"
	name                 func(*S) string
	file                 func(path string) ([]S, error)
	bundled              func(name string) (*S, string)
	bundledNames         func() []string
}

// findSet finds a named set among the sets given in memory, then in the
// files and directories of paths, then among the bundled ones.
func findSet[S any](k setKind[S], name string, paths []string, given []S, failed map[string]error) (*S, string, error) {
	for i := range given {
		if k.name(&given[i]) == name {
			s := given[i]
			return &s, "given", nil
		}
	}
	find := func(file string) (*S, error) {
		sets, err := k.file(file)
		if err != nil {
			return nil, err
		}
		for i := range sets {
			if k.name(&sets[i]) == name {
				return &sets[i], nil
			}
		}
		return nil, nil
	}
	set, src, err := cfgSearch(name, paths, k.ext, k.sub, find)
	if set != nil || err != nil {
		return set, src, err
	}
	if b, file := k.bundled(name); b != nil {
		return b, "bundled:" + file, nil
	}
	return nil, "", cfgNotFound(k.what, name, paths, k.ext, k.bundledNames(), k.flag, failed)
}

// cfgSearch looks for a set in the given files and directories. A file
// given by name that cannot be read is an error; so is NAME.ext in a
// directory; other files of a directory that cannot be read are skipped
// (the not-found message names them).
func cfgSearch[T any](name string, paths []string, ext, sub string, find func(string) (*T, error)) (*T, string, error) {
	for _, p := range paths {
		st, err := os.Stat(p)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil, "", fmt.Errorf("%s: no such file or directory", p)
			}
			return nil, "", err
		}
		if !st.IsDir() {
			set, err := find(p)
			if err != nil || set != nil {
				return set, p, err
			}
			continue
		}
		dirs := []string{p}
		if st, err := os.Stat(filepath.Join(p, sub)); err == nil && st.IsDir() {
			dirs = append(dirs, filepath.Join(p, sub))
		}
		for _, d := range dirs {
			exact := filepath.Join(d, name+ext)
			if _, err := os.Stat(exact); err == nil {
				set, err := find(exact)
				if err != nil || set != nil {
					return set, exact, err
				}
			}
		}
		for _, d := range dirs {
			for _, f := range cfgFilesWithExt(d, ext) {
				if set, err := find(f); err == nil && set != nil {
					return set, f, nil
				}
			}
		}
	}
	return nil, "", nil
}

// cfgFilesWithExt lists the files of a directory with an extension, sorted.
func cfgFilesWithExt(dir, ext string) []string {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range ents {
		if e.Type().IsRegular() && strings.EqualFold(filepath.Ext(e.Name()), ext) {
			out = append(out, filepath.Join(dir, e.Name()))
		}
	}
	return out
}

// allSetsOfFiles returns the names of every set of the files (not
// directories) among paths: what a resource file that names no set gets
// when the user gives set files explicitly.
func (ld *cfgLoader) allSetsOfFiles(paths []string, ext string) []string {
	var names []string
	for _, p := range paths {
		st, err := os.Stat(p)
		if err != nil || st.IsDir() {
			continue
		}
		if ext == ".cnv" {
			sets, _ := ld.ruleFile(p)
			for _, s := range sets {
				names = append(names, s.Name)
			}
		} else {
			sets, _ := ld.headerFile(p)
			for _, s := range sets {
				names = append(names, s.Name)
			}
		}
	}
	return names
}

func cfgNotFound(what, name string, paths []string, ext string, bundled []string, flag string, failed map[string]error) error {
	var where []string
	for _, p := range paths {
		where = append(where, p)
	}
	where = append(where, "the bundled "+what+"s ("+strings.Join(bundled, ", ")+")")
	msg := fmt.Sprintf("%s %q not found in %s", what, name, cfgJoinOr(where))
	if len(paths) == 0 {
		msg += fmt.Sprintf("; give the %s file or its directory with %s", ext, flag)
	}
	if len(failed) > 0 {
		files := make([]string, 0, len(failed))
		for f := range failed {
			files = append(files, f)
		}
		sort.Strings(files)
		var pe *ConfigError
		err := failed[files[0]]
		if errors.As(err, &pe) {
			msg += "; some files could not be read, the first: " + pe.Error()
		} else if errors.Is(err, fs.ErrNotExist) {
			msg += "; " + err.Error()
		} else {
			msg += "; some files could not be read, the first: " + err.Error()
		}
	}
	return errors.New(msg)
}

func cfgJoinOr(s []string) string {
	switch len(s) {
	case 0:
		return ""
	case 1:
		return s[0]
	}
	return strings.Join(s[:len(s)-1], ", ") + " or " + s[len(s)-1]
}

// ---------------------------------------------------------------------
// The ingesters' loader (tlv.go)

func init() { LoadSetup = loadSetup }

// loadSetup loads what the ingesters need: forceRules (the bundled kernel
// set of toppers-asp and toppers-fmp) stands for the rule set and the
// header set when the resource file names none.
func loadSetup(resPath string, ruleDirs, headerDirs []string, forceRules []string) (*Setup, error) {
	c, err := LoadOptions(resPath, Options{
		RulePaths: ruleDirs, HeaderPaths: headerDirs,
		DefaultRules: forceRules, DefaultHeaders: forceRules,
	})
	if err != nil {
		return nil, err
	}
	return c.Setup(), nil
}

// Setup returns the configuration in the form the ingesters take.
func (c *Config) Setup() *Setup {
	return &Setup{Res: c.Res, Types: c.TypeList(), Rules: c.RuleSets, Warnings: c.Warnings}
}

// TypeList returns the resource types in the order the header sets declare
// them; a type declared again keeps its first place with its last
// declaration.
func (c *Config) TypeList() []*ResourceType {
	var out []*ResourceType
	at := map[string]int{}
	for _, h := range c.Headers {
		for _, t := range h.Types {
			if i, ok := at[t.Name]; ok {
				out[i] = t
				continue
			}
			at[t.Name] = len(out)
			out = append(out, t)
		}
	}
	return out
}
