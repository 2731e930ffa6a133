package tlv

// A small loader of TLV configuration files for the tests of the readers,
// independent of config.go: lenient JSON (BOM, comments, trailing commas)
// with keys in file order, mapped to the model types.

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

type jnode struct {
	kind      byte // 's' string, 'n' number, 'b' bool, 'z' null, 'o' object, 'a' array
	text      string
	keys      []string
	vals      []*jnode
	line, col int
}

type jparser struct {
	s         string
	i         int
	line, col int
	file      string
}

func (p *jparser) errf(format string, args ...any) error {
	return fmt.Errorf("%s:%d:%d: %s", p.file, p.line, p.col, fmt.Sprintf(format, args...))
}

func (p *jparser) adv(n int) {
	for k := 0; k < n && p.i < len(p.s); k++ {
		if p.s[p.i] == '\n' {
			p.line++
			p.col = 1
		} else {
			p.col++
		}
		p.i++
	}
}

func (p *jparser) space() {
	for p.i < len(p.s) {
		switch {
		case strings.HasPrefix(p.s[p.i:], "//"):
			for p.i < len(p.s) && p.s[p.i] != '\n' {
				p.adv(1)
			}
		case strings.HasPrefix(p.s[p.i:], "/*"):
			end := strings.Index(p.s[p.i+2:], "*/")
			if end < 0 {
				p.adv(len(p.s))
				return
			}
			p.adv(end + 4)
		case strings.ContainsRune(" \t\r\n", rune(p.s[p.i])):
			p.adv(1)
		default:
			return
		}
	}
}

func (p *jparser) value() (*jnode, error) {
	p.space()
	if p.i >= len(p.s) {
		return nil, p.errf("unexpected end")
	}
	n := &jnode{line: p.line, col: p.col}
	switch c := p.s[p.i]; {
	case c == '{' || c == '[':
		close := byte('}')
		n.kind = 'o'
		if c == '[' {
			close, n.kind = ']', 'a'
		}
		p.adv(1)
		for {
			p.space()
			if p.i < len(p.s) && p.s[p.i] == ',' {
				p.adv(1)
				continue
			}
			if p.i < len(p.s) && p.s[p.i] == close {
				p.adv(1)
				return n, nil
			}
			if n.kind == 'o' {
				k, err := p.value()
				if err != nil {
					return nil, err
				}
				if k.kind != 's' {
					return nil, p.errf("expected a key")
				}
				p.space()
				if p.i >= len(p.s) || p.s[p.i] != ':' {
					return nil, p.errf("expected ':'")
				}
				p.adv(1)
				n.keys = append(n.keys, k.text)
			}
			v, err := p.value()
			if err != nil {
				return nil, err
			}
			n.vals = append(n.vals, v)
		}
	case c == '"':
		p.adv(1)
		var b strings.Builder
		for p.i < len(p.s) && p.s[p.i] != '"' {
			if p.s[p.i] == '\\' && p.i+1 < len(p.s) {
				switch e := p.s[p.i+1]; e {
				case 'n':
					b.WriteByte('\n')
				case 't':
					b.WriteByte('\t')
				case 'u':
					r, _ := strconv.ParseUint(p.s[p.i+2:p.i+6], 16, 32)
					b.WriteRune(rune(r))
					p.adv(4)
				case '"', '\\', '/':
					b.WriteByte(e)
				default:
					b.WriteByte('\\') // TLV keeps unknown escapes: "\d" is \d
					b.WriteByte(e)
				}
				p.adv(2)
				continue
			}
			b.WriteByte(p.s[p.i])
			p.adv(1)
		}
		p.adv(1)
		n.kind, n.text = 's', b.String()
		return n, nil
	default:
		j := p.i
		for j < len(p.s) && !strings.ContainsRune(",}] \t\r\n/", rune(p.s[j])) {
			j++
		}
		n.text = p.s[p.i:j]
		switch n.text {
		case "true", "false":
			n.kind = 'b'
		case "null":
			n.kind = 'z'
		default:
			n.kind = 'n'
		}
		p.adv(j - p.i)
		return n, nil
	}
}

func parseJSONC(path string) (*jnode, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	p := &jparser{s: strings.TrimPrefix(string(b), "\ufeff"), line: 1, col: 1, file: path}
	return p.value()
}

func (n *jnode) get(k string) *jnode {
	for i, key := range n.keys {
		if key == k {
			return n.vals[i]
		}
	}
	return nil
}

func (n *jnode) strs() []string {
	var out []string
	if n == nil {
		return nil
	}
	for _, v := range n.vals {
		out = append(out, v.text)
	}
	return out
}

func kindOf(n *jnode) ValueKind {
	switch n.kind {
	case 'n':
		return KindNumber
	case 'b':
		return KindBool
	case 'z':
		return KindNull
	}
	return KindString
}

func stubResource(path string) (*ResourceFile, error) {
	n, err := parseJSONC(path)
	if err != nil {
		return nil, err
	}
	rf := &ResourceFile{Path: path, TimeRadix: 10}
	if v := n.get("TimeScale"); v != nil {
		rf.TimeScale = v.text
	}
	if v := n.get("TimeRadix"); v != nil {
		rf.TimeRadix, _ = strconv.Atoi(v.text)
	}
	rf.ConvertRules = n.get("ConvertRules").strs()
	rf.VisualizeRules = n.get("VisualizeRules").strs()
	rf.ResourceHeaders = n.get("ResourceHeaders").strs()
	if rs := n.get("Resources"); rs != nil {
		for i, name := range rs.keys {
			r := rs.vals[i]
			res := Resource{Name: name, Pos: Pos{File: path, Line: r.line, Col: r.col, Key: name}}
			if t := r.get("Type"); t != nil {
				res.Type = t.text
			}
			if as := r.get("Attributes"); as != nil {
				for j, an := range as.keys {
					res.Attributes = append(res.Attributes, Value{Name: an, Text: as.vals[j].text, Kind: kindOf(as.vals[j])})
				}
			}
			rf.Resources = append(rf.Resources, res)
		}
	}
	return rf, nil
}

func stubHeaders(path string) ([]HeaderSet, error) {
	n, err := parseJSONC(path)
	if err != nil {
		return nil, err
	}
	var sets []HeaderSet
	for i, setName := range n.keys {
		hs := HeaderSet{Name: setName}
		tn := n.vals[i]
		for j, typeName := range tn.keys {
			t := tn.vals[j]
			rt := &ResourceType{Name: typeName, Pos: Pos{File: path, Line: t.line, Col: t.col, Key: typeName}}
			if d := t.get("DisplayName"); d != nil {
				rt.DisplayName = d.text
			}
			if as := t.get("Attributes"); as != nil {
				for k, an := range as.keys {
					a := as.vals[k]
					ad := AttributeDef{Name: an}
					if v := a.get("VariableType"); v != nil {
						ad.VariableType = v.text
					}
					if v := a.get("AllocationType"); v != nil {
						ad.AllocationType = v.text
					}
					if v := a.get("Default"); v != nil {
						ad.Default = &Value{Name: an, Text: v.text, Kind: kindOf(v)}
					}
					rt.Attributes = append(rt.Attributes, ad)
				}
			}
			if bs := t.get("Behaviors"); bs != nil {
				for k, bn := range bs.keys {
					bd := BehaviorDef{Name: bn}
					if args := bs.vals[k].get("Arguments"); args != nil {
						for l, argName := range args.keys {
							bd.Arguments = append(bd.Arguments, ArgumentDef{Name: argName, Type: args.vals[l].text})
						}
					}
					rt.Behaviors = append(rt.Behaviors, bd)
				}
			}
			hs.Types = append(hs.Types, rt)
		}
		sets = append(sets, hs)
	}
	return sets, nil
}

func stubRules(path string) ([]RuleSet, error) {
	n, err := parseJSONC(path)
	if err != nil {
		return nil, err
	}
	var sets []RuleSet
	for i, setName := range n.keys {
		rs := RuleSet{Name: setName}
		rn := n.vals[i]
		for j, pat := range rn.keys {
			v := rn.vals[j]
			pos := Pos{File: path, Line: v.line, Col: v.col, Key: pat}
			rs.Rules = append(rs.Rules, Rule{Pattern: pat, Outputs: stubOutputs(v, path), Pos: pos})
		}
		sets = append(sets, rs)
	}
	return sets, nil
}

func stubOutputs(v *jnode, path string) []Output {
	pos := Pos{File: path, Line: v.line, Col: v.col}
	switch v.kind {
	case 'a':
		var out []Output
		for _, e := range v.vals {
			out = append(out, stubOutputs(e, path)...)
		}
		return out
	case 'o':
		o := Output{Pos: pos, Cond: []Case{}}
		for i, k := range v.keys {
			c := v.vals[i]
			o.Cond = append(o.Cond, Case{Condition: k, Outputs: stubOutputs(c, path), Pos: Pos{File: path, Line: c.line, Col: c.col, Key: k}})
		}
		return []Output{o}
	}
	return []Output{{Template: v.text, Pos: pos}}
}

// stubFiles lists the files with extension ext of paths (files or dirs).
func stubFiles(paths []string, ext string) []string {
	var out []string
	for _, p := range paths {
		st, err := os.Stat(p)
		if err != nil {
			continue
		}
		if !st.IsDir() {
			out = append(out, p)
			continue
		}
		m, _ := filepath.Glob(filepath.Join(p, "*"+ext))
		out = append(out, m...)
	}
	return out
}

func stubLoad(resPath string, ruleDirs, headerDirs []string, force []string) (*Setup, error) {
	rf, err := stubResource(resPath)
	if err != nil {
		return nil, err
	}
	s := &Setup{Res: rf}
	for _, name := range rf.ResourceHeaders {
		found := false
		for _, f := range stubFiles(headerDirs, ".resh") {
			sets, err := stubHeaders(f)
			if err != nil {
				return nil, err
			}
			for _, hs := range sets {
				if hs.Name == name {
					s.Types = append(s.Types, hs.Types...)
					found = true
				}
			}
		}
		if !found {
			return nil, fmt.Errorf("%s: no resource header %q", resPath, name)
		}
	}
	names := rf.ConvertRules
	named := false
	for _, n := range names {
		if n != "" {
			named = true
		}
	}
	if !named {
		names = force
	}
	for _, name := range names {
		if name == "" {
			continue
		}
		found := false
		for _, f := range stubFiles(ruleDirs, ".cnv") {
			sets, err := stubRules(f)
			if err != nil {
				return nil, err
			}
			for _, rs := range sets {
				if rs.Name == name {
					s.Rules = append(s.Rules, rs)
					found = true
				}
			}
		}
		if !found {
			return nil, fmt.Errorf("%s: no conversion rules %q", resPath, name)
		}
	}
	return s, nil
}
