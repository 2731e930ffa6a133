package tlv

import (
	"fmt"
	"os"
	"strconv"
)

// A statistics generation rule file (.sgr) of TLV names statistics and how
// TLV made each: an object whose members are the statistics, each with
// "Setting" (title, axes, chart type), "UseResourceColor", "Mode" and the
// mode's rule. TLV's modes: "Basic" (BasicRule: counts and times of the
// standard-format events), "Regexp" (RegexpRule: data points read from
// the lines of a file by regular expressions), "Script" (ScriptExtension:
// an external program prints the statistics), "Input" (InputRule: the
// statistics as data). traceduck reads Basic, which is SQL over the
// tables (queries/tlv_stats.sql); the others are refused at their Mode
// with the reason.
//
// A BasicRule has Method "Count" or "Measure", an optional Interval (in
// the log's time unit) and either When, or From and To: events as TLV's
// BaseEvent names them (ResourceName or ResourceType: a name or a list;
// AttributeName and AttributeValue, or BehaviorName and BehaviorArg).
// What TLV computed (its StatisticsGenerator, applyBasicRule):
//   - Count with When: per resource When names, the events it names; with
//     an Interval, of the first such resource, per window of Interval
//     from the log's first event while before its last.
//   - Measure with When: per resource, the time between consecutive
//     events it names (mean; max and min in the label).
//   - Measure with From and To: per pair of resources (the From's and
//     the To's, in order), for each To event the time since the last From
//     event before it (mean, max, min).
//   - Count with From and To: an error.

// StatRule is one statistic of a .sgr file in the Basic mode.
type StatRule struct {
	Name     string // the statistic's name (the member's key)
	Title    string // Setting.Title, else Name
	Method   string // Count or Measure
	Interval float64
	When     *StatEvent
	From, To *StatEvent
	Pos      Pos // where the statistic is
}

// StatEvent is a BaseEvent of a BasicRule.
type StatEvent struct {
	Names, Types     []string // ResourceName, ResourceType
	Attribute, Value string   // AttributeName, AttributeValue
	Behavior         string   // BehaviorName
	Args             []string // BehaviorArg split at its commas and trimmed; nil: any
	HasArgs          bool
	Pos              Pos
}

// ReadSGRFile reads a .sgr file.
func ReadSGRFile(path string) ([]StatRule, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if st.Size() > MaxConfigSize {
		return nil, fmt.Errorf("%s: %d bytes: expected a statistics generation rule file of at most %d", path, st.Size(), MaxConfigSize)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return ReadSGR(path, data)
}

// ReadSGR reads the statistics of a .sgr file, in file order. A statistic
// in a mode other than Basic, or a Basic rule traceduck cannot compute, is
// an error at its place (FILE:LINE:COL) that says why.
func ReadSGR(name string, data []byte) ([]StatRule, error) {
	d, err := jcParse(name, data)
	if err != nil {
		return nil, err
	}
	if d.Root.Kind != jcObject {
		return nil, d.errorf(d.Root.Off, "", "", "expected an object of statistics, found %s", d.Root.Kind.name())
	}
	if len(d.Root.Members) == 0 {
		return nil, d.errorf(d.Root.Off, "", "", "expected at least one statistic, found an empty object")
	}
	var out []StatRule
	for _, m := range d.Root.Members {
		r, err := readStatRule(d, m)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, nil
}

func readStatRule(d *jcDoc, m jcMember) (StatRule, error) {
	in := fmt.Sprintf("statistic %q", m.Key)
	r := StatRule{Name: m.Key, Title: m.Key, Pos: d.pos(m.KeyOff, m.Key)}
	v := m.Value
	if v.Kind != jcObject {
		return r, d.errorf(v.Off, in, m.Key, "expected an object, found %s", v.Kind.name())
	}
	var mode, basic *jcValue
	var modeOff int
	for _, f := range v.Members {
		switch f.Key {
		case "Mode":
			if f.Value.Kind != jcString {
				return r, d.errorf(f.Value.Off, in, f.Key, "Mode: expected a string, found %s", f.Value.Kind.name())
			}
			mode, modeOff = f.Value, f.Value.Off
		case "BasicRule":
			basic = f.Value
		case "Setting":
			if f.Value.Kind == jcObject {
				for _, s := range f.Value.Members {
					if s.Key == "Title" && s.Value.Kind == jcString && s.Value.Text != "" {
						r.Title = s.Value.Text
					}
				}
			}
		}
	}
	if mode == nil {
		return r, d.errorf(v.Off, in, m.Key, "expected a Mode (Basic, Regexp, Script or Input), found none")
	}
	switch mode.Text {
	case "Basic":
	case "Script":
		return r, d.errorf(modeOff, in, "Mode", `Mode: expected Basic, found "Script": the statistic is what an external program (ScriptExtension) prints; traceduck runs no program: not supported`)
	case "Regexp":
		return r, d.errorf(modeOff, in, "Mode", `Mode: expected Basic, found "Regexp": data points read from the lines of a log by regular expressions; the database keeps events, not lines: not supported`)
	case "Input":
		return r, d.errorf(modeOff, in, "Mode", `Mode: expected Basic, found "Input": the statistic is given as data, there is nothing to compute: not supported`)
	default:
		return r, d.errorf(modeOff, in, "Mode", "Mode: expected Basic, Regexp, Script or Input, found %q", mode.Text)
	}
	if basic == nil {
		return r, d.errorf(modeOff, in, "Mode", "Mode Basic: expected a BasicRule, found none")
	}
	if basic.Kind != jcObject {
		return r, d.errorf(basic.Off, in, "BasicRule", "BasicRule: expected an object, found %s", basic.Kind.name())
	}
	var methodOff int
	for _, f := range basic.Members {
		var err error
		switch f.Key {
		case "Method":
			if f.Value.Kind != jcString || (f.Value.Text != "Count" && f.Value.Text != "Measure") {
				return r, d.errorf(f.Value.Off, in, f.Key, "Method: expected Count or Measure, found %s", sgrShow(f.Value))
			}
			r.Method, methodOff = f.Value.Text, f.Value.Off
		case "Interval":
			if f.Value.Kind != jcNumber {
				return r, d.errorf(f.Value.Off, in, f.Key, "Interval: expected a number (the log's time unit), found %s", sgrShow(f.Value))
			}
			x, perr := strconv.ParseFloat(f.Value.Text, 64)
			if perr != nil || x < 0 {
				return r, d.errorf(f.Value.Off, in, f.Key, "Interval: expected a number of at least 0, found %s", f.Value.Text)
			}
			r.Interval = x
		case "When":
			r.When, err = readStatEvent(d, in, f)
		case "From":
			r.From, err = readStatEvent(d, in, f)
		case "To":
			r.To, err = readStatEvent(d, in, f)
		default:
			return r, d.errorf(f.KeyOff, in, f.Key, "BasicRule: expected Method, Interval, When, From or To, found %q", f.Key)
		}
		if err != nil {
			return r, err
		}
	}
	switch {
	case r.Method == "":
		return r, d.errorf(basic.Off, in, "BasicRule", "BasicRule: expected a Method (Count or Measure), found none")
	case r.When != nil && (r.From != nil || r.To != nil):
		return r, d.errorf(basic.Off, in, "BasicRule", "BasicRule: expected When, or From and To, found both")
	case r.When == nil && (r.From == nil || r.To == nil):
		return r, d.errorf(basic.Off, in, "BasicRule", "BasicRule: expected When, or From and To, found neither")
	case r.When == nil && r.Method == "Count":
		return r, d.errorf(methodOff, in, "Method", "Method: expected Measure with From and To (TLV counts only with When), found Count")
	case r.Interval > 0 && (r.Method != "Count" || r.When == nil):
		return r, d.errorf(methodOff, in, "Method", "Interval: TLV uses it only with Count and When, found %s", r.Method)
	}
	return r, nil
}

func readStatEvent(d *jcDoc, in string, f jcMember) (*StatEvent, error) {
	v := f.Value
	e := &StatEvent{Pos: d.pos(v.Off, f.Key)}
	if v.Kind != jcObject {
		return nil, d.errorf(v.Off, in, f.Key, "%s: expected an object, found %s", f.Key, v.Kind.name())
	}
	strs := func(g jcMember) ([]string, error) {
		switch g.Value.Kind {
		case jcString:
			return []string{g.Value.Text}, nil
		case jcArray:
			var out []string
			for _, el := range g.Value.Elems {
				if el.Kind != jcString {
					return nil, d.errorf(el.Off, in, g.Key, "%s.%s: expected names, found %s", f.Key, g.Key, el.Kind.name())
				}
				out = append(out, el.Text)
			}
			return out, nil
		}
		return nil, d.errorf(g.Value.Off, in, g.Key, "%s.%s: expected a name or a list of names, found %s", f.Key, g.Key, g.Value.Kind.name())
	}
	str := func(g jcMember) (string, error) {
		switch g.Value.Kind {
		case jcString, jcNumber, jcBool:
			return g.Value.Text, nil
		}
		return "", d.errorf(g.Value.Off, in, g.Key, "%s.%s: expected a string, found %s", f.Key, g.Key, g.Value.Kind.name())
	}
	for _, g := range v.Members {
		var err error
		switch g.Key {
		case "ResourceName":
			e.Names, err = strs(g)
		case "ResourceType":
			e.Types, err = strs(g)
		case "AttributeName":
			e.Attribute, err = str(g)
		case "AttributeValue":
			e.Value, err = str(g)
		case "BehaviorName":
			e.Behavior, err = str(g)
		case "BehaviorArg":
			var a string
			if a, err = str(g); err == nil && a != "" {
				e.HasArgs = true
				e.Args = splitArgs(a) // as the standard format's arguments are split

			}
		default:
			return nil, d.errorf(g.KeyOff, in, g.Key, "%s: expected ResourceName, ResourceType, AttributeName, AttributeValue, BehaviorName or BehaviorArg, found %q", f.Key, g.Key)
		}
		if err != nil {
			return nil, err
		}
	}
	switch {
	case len(e.Names) == 0 && len(e.Types) == 0:
		return nil, d.errorf(v.Off, in, f.Key, "%s: expected ResourceName or ResourceType, found neither", f.Key)
	case e.Behavior == "" && (e.Attribute == "" || e.Value == ""):
		return nil, d.errorf(v.Off, in, f.Key, "%s: expected AttributeName and AttributeValue, or BehaviorName, found neither", f.Key)
	}
	return e, nil
}

// sgrShow shows a value in a message.
func sgrShow(v *jcValue) string {
	if v.Kind == jcString {
		return strconv.Quote(v.Text)
	}
	if v.Kind == jcNumber || v.Kind == jcBool || v.Kind == jcNull {
		return v.Text
	}
	return v.Kind.name()
}
