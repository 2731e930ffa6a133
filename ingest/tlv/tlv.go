package tlv

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"
	"unsafe"

	"github.com/traceduck/traceduck/ingest"
	"github.com/traceduck/traceduck/schema"
)

// Setup is what reading a log needs: the resource file, the resource
// types of the headers it names, and the conversion rule sets it names
// (none: the log is in the standard format).
type Setup struct {
	Res   *ResourceFile
	Types []*ResourceType
	Rules []RuleSet
	// Warnings are what the configuration files got wrong without stopping
	// the ingest (an attribute the type does not declare, ...): they go to
	// diagnostics.
	Warnings []*ConfigError
}

// SetupLoader loads a Setup: the resource file at resPath, the headers and
// rules it names, searched in ruleDirs/headerDirs (files or directories)
// and then in the bundled defaults. forceRules, when not empty, names the
// rule sets to use when the resource file names none (toppers-asp,
// toppers-fmp).
type SetupLoader func(resPath string, ruleDirs, headerDirs []string, forceRules []string) (*Setup, error)

// LoadSetup is the loader the ingesters use (config.go's, by default).
var LoadSetup SetupLoader

func init() {
	ingest.Register(40, &Ingester{kind: kindTLV})
	ingest.Register(41, &Ingester{kind: kindASP})
	ingest.Register(42, &Ingester{kind: kindFMP})
}

type ingKind uint8

const (
	kindTLV ingKind = iota
	kindASP
	kindFMP
)

// Ingester reads TLV standard-format logs, and any text log through TLV
// conversion rules: format "tlv" (rules named by the resource file), and
// "toppers-asp" / "toppers-fmp" (TOPPERS kernel logs, with the bundled
// rules).
type Ingester struct {
	kind   ingKind
	params map[string]string
	setup  *Setup
}

// Format describes the format.
func (g *Ingester) Format() ingest.Format {
	switch g.kind {
	case kindASP:
		return ingest.Format{Name: "toppers-asp", Description: "TOPPERS/ASP kernel trace logs ([TIME] message), converted by the bundled TLV rules (needs --resources)", Patterns: []string{"*.log"}}
	case kindFMP:
		return ingest.Format{Name: "toppers-fmp", Description: "TOPPERS/FMP kernel trace logs ([TIME]:[PRC]: message), converted by the bundled TLV rules (needs --resources)", Patterns: []string{"*.log"}}
	}
	return ingest.Format{Name: "tlv", Description: "TraceLogVisualizer standard format, or any text log through TLV conversion rules (needs --resources)", Patterns: []string{"*.log"}}
}

// Params lists the flags.
func (g *Ingester) Params() []ingest.Param {
	return []ingest.Param{
		{Name: "resources", Help: "TLV resource file (.res): resources, time unit and radix, the rules and headers to use"},
		{Name: "rules", Help: "TLV conversion rules (.cnv): a file or directory, comma-separated (bundled rules are searched last)"},
		{Name: "headers", Help: "TLV resource headers (.resh): a file or directory, comma-separated (bundled headers are searched last)"},
	}
}

// With loads the configuration the flags name.
func (g *Ingester) With(params map[string]string) (ingest.Ingester, error) {
	for k := range params {
		switch k {
		case "resources", "rules", "headers":
		default:
			return nil, fmt.Errorf("format %s takes no --%s", g.Format().Name, k)
		}
	}
	res := params["resources"]
	if res == "" {
		// the resource file beside the log, found when the log is read
		return &Ingester{kind: g.kind, params: params}, nil
	}
	s, err := g.load(res, params)
	if err != nil {
		return nil, err
	}
	return &Ingester{kind: g.kind, params: params, setup: s}, nil
}

// load reads the resource file res and the rules and headers it names.
func (g *Ingester) load(res string, params map[string]string) (*Setup, error) {
	if LoadSetup == nil {
		return nil, fmt.Errorf("format %s: no configuration loader", g.Format().Name)
	}
	var force []string
	switch g.kind {
	case kindASP:
		force = []string{"asp"}
	case kindFMP:
		force = []string{"fmp"}
	}
	return LoadSetup(res, splitList(params["rules"]), splitList(params["headers"]), force)
}

// setupFor is the configuration of a log: the one --resources named, else
// the resource file beside the log, BASE.res (TLV's own convention: a log
// and its resource file share their base name); found is that file's path
// when it was taken from beside the log.
func (g *Ingester) setupFor(name string) (s *Setup, found string, err error) {
	if g.setup != nil {
		return g.setup, "", nil
	}
	if name == "-" || name == "" {
		return nil, "", fmt.Errorf("format %s needs --resources FILE.res (the resource file that declares the trace's resources) for a log on standard input", g.Format().Name)
	}
	beside := strings.TrimSuffix(name, filepath.Ext(name)) + ".res"
	if st, err := os.Stat(beside); err != nil || !st.Mode().IsRegular() {
		return nil, "", fmt.Errorf("format %s needs --resources FILE.res (the resource file that declares the trace's resources): there is no %s beside the log", g.Format().Name, beside)
	}
	s, err = g.load(beside, g.params)
	return s, beside, err
}

func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// sniffRe is a standard-format line: [TIME]Name. or [TIME]Name(
var sniffRe = regexp.MustCompile(`^\s*\[[0-9A-Za-z]+(\.[0-9A-Za-z]*)?\][^\s\[\]().=]+[.(]`)

// rawASPRe and rawFMPRe are the lines of raw TOPPERS logs as the kernel's
// syslog prints them: [TIME] message, [TIME]:[PRC]: message. topperRe is
// a message only the TOPPERS kernel's trace log prints, so that some
// other "[number] text" log is not taken for one.
var (
	rawASPRe  = regexp.MustCompile(`^\[[0-9]+\] \S`)
	rawFMPRe  = regexp.MustCompile(`^\[[0-9]+\]:\[[0-9]+\]: \S`)
	toppersRe = regexp.MustCompile(`\]:? (dispatch to task [0-9]+\.|enter to [a-z_]+|leave from [a-z_]+|task [0-9]+ becomes [A-Z]+|dispatch from task [0-9]+\.|enter to int handler|leave from int handler)`)
)

// Sniff recognizes the standard format (tlv), or a raw TOPPERS/ASP or FMP
// log (toppers-asp, toppers-fmp): among the first non-blank lines, at
// least three, and all of them, are lines of the format, and for a raw
// log at least one of them is a message only the TOPPERS kernel prints.
func (g *Ingester) Sniff(head []byte) bool {
	switch g.kind {
	case kindASP:
		return sniffLines(head, rawASPRe, toppersRe)
	case kindFMP:
		return sniffLines(head, rawFMPRe, toppersRe)
	}
	return sniffLines(head, sniffRe, nil)
}

// sniffLines tells whether at least three, and all, of the first ten
// non-blank lines match line (the last line of the head may be cut), and
// when must is given, one of them matches it.
func sniffLines(head []byte, re, must *regexp.Regexp) bool {
	lr := ingest.NewLineReader(bytes.NewReader(head))
	n, seen := 0, false
	for n < 10 {
		line, ok := lr.Next()
		if !ok {
			break
		}
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		if bytes.HasPrefix(line, []byte("\xef\xbb\xbf")) {
			line = line[3:]
		}
		if !re.Match(line) {
			// The last line of the head may be cut.
			if _, more := lr.Next(); !more && n >= 3 {
				return seen || must == nil
			}
			return false
		}
		if must != nil && must.Match(line) {
			seen = true
		}
		n++
	}
	return n >= 3 && (seen || must == nil)
}

// Ingest reads the log into w.
func (g *Ingester) Ingest(ctx context.Context, src *ingest.Source, w *schema.RunWriter) error {
	setup, found, err := g.setupFor(src.Name)
	if err != nil {
		return err
	}
	if found != "" {
		w.SetMeta("resources", found)
		w.SetMeta("found_beside", found)
	}
	sink := newTableSink(w)
	rd, err := NewReader(setup, sink, sink)
	if err != nil {
		return err
	}
	sink.start(rd, g.kind == kindFMP)
	if err := rd.ReadAll(ctx, src, w.Info().Source, g.kind == kindFMP); err != nil {
		return err
	}
	return sink.finish(rd)
}

// Convert reads src as Ingest does and writes the standard-format lines
// to out, one per line (what TLV's conversion produces; a log in the
// standard format already is written as it is read, less the white space
// between the parts of a line, as TLV writes it). A line that cannot
// be read is an error (with skipBad, it is reported in the notes and
// skipped); what Ingest records in diagnostics comes back as notes.
func (g *Ingester) Convert(ctx context.Context, src *ingest.Source, out io.Writer, skipBad bool) (notes []Note, err error) {
	setup, _, err := g.setupFor(src.Name)
	if err != nil {
		return nil, err
	}
	src.NoHash() // nothing asks for the log's hash: the bytes are not hashed as they are read
	p := &printSink{w: bufio.NewWriterSize(out, 64<<10), file: src.Name, skipBad: skipBad, keys: map[string]int{}}
	rd, err := NewReader(setup, p, p)
	if err != nil {
		return nil, err
	}
	if err := rd.ReadAll(ctx, src, src.Name, g.kind == kindFMP); err != nil {
		p.w.Flush()
		return p.notes, err
	}
	rd.Finish()
	return p.notes, p.w.Flush()
}

// Note is a finding of Convert: what the diagnostics table would hold.
type Note struct {
	Severity schema.Severity
	Line     int64 // first line concerned, 0 when none
	Message  string
	Count    int64
}

// printSink writes standard-format lines.
type printSink struct {
	w       *bufio.Writer
	file    string
	skipBad bool
	notes   []Note
	keys    map[string]int
}

// TimeOutOfBounds: a converted line's time is never out of bounds (the
// bounds are those of a run, and conversion writes none).
func (p *printSink) TimeOutOfBounds(int64) string { return "" }

func (p *printSink) Std(text string, src int64) error {
	p.w.WriteString(text)
	return p.w.WriteByte('\n')
}

func (p *printSink) Event(*Event) error { return nil }

func (p *printSink) Bad(src int64, format string, args ...any) error {
	e := &schema.InputError{File: p.file, Line: src, Offset: -1, Msg: fmt.Sprintf(format, args...)}
	if !p.skipBad {
		return e
	}
	p.notes = append(p.notes, Note{Severity: schema.Error, Line: src, Message: e.Msg, Count: 1})
	return nil
}

func (p *printSink) Note(sev schema.Severity, key string, src int64, msg string) {
	if _, ok := p.keys[key]; !ok && len(p.keys) >= maxNotes {
		key, msg = "\x00more", moreNotes+": "+msg
	}
	if i, ok := p.keys[key]; ok {
		p.notes[i].Count++
		return
	}
	p.keys[key] = len(p.notes)
	p.notes = append(p.notes, Note{Severity: sev, Line: src, Message: msg, Count: 1})
}

func (p *printSink) Count(sev schema.Severity, src int64, msg string, n int64) {
	p.notes = append(p.notes, Note{Severity: sev, Line: src, Message: msg, Count: n})
}

// Sink receives what a Reader reads.
type Sink interface {
	// Std gets each standard-format line (read, or produced by a rule),
	// as TLV writes it (StdLine.Canonical), before it is applied. The
	// text is valid only during the call.
	Std(text string, src int64) error
	// Event gets each event a line makes: one per resource it selects.
	Event(e *Event) error
	// TimeOutOfBounds says why a line's time (ns) cannot be taken, ""
	// when it can (schema.RunWriter.TimeOutOfBounds); the line is then bad.
	TimeOutOfBounds(ns int64) string
}

// Reporter receives what is wrong with the input.
type Reporter interface {
	// Bad reports a line that cannot be read (syntax); it returns the
	// error that stops reading, or nil to skip the line.
	Bad(src int64, format string, args ...any) error
	// Note records a finding once per key and counts its repeats; the
	// first occurrence's message is kept.
	Note(sev schema.Severity, key string, src int64, msg string)
	// Count records a finding that happened n times.
	Count(sev schema.Severity, src int64, msg string, n int64)
}

// Event is one event of the standard format, resolved to a resource.
type Event struct {
	Time     Time
	Src      int64      // line of the source log
	CPU      schema.CPU // processor of the line (FMP), NoCPU when unknown
	Res      *Res
	Attr     int // attribute number (0-based in the type) of an attribute change; -1 for a behavior
	Value    string
	Behavior string
	Args     []string
}

// Reader reads a log line by line: converted by the rules when the setup
// has some, else as the standard format; every standard-format line goes
// to the sink and is applied to the state. `traceduck convert` and the
// ingesters share it.
type Reader struct {
	St    *State
	Conv  *Converter
	Radix int
	Unit  TimeUnit

	sink     Sink
	rep      Reporter
	warnings []*ConfigError // the configuration's, for diagnostics
	sel      []*Res
	ev       Event

	src     int64
	cpu     schema.CPU
	rawLine string

	// the parses of the parts of lines after their times (parse)
	rests map[string]*restEntry
	line  restEntry // the parse of a line whose rest is not kept
	canon []byte    // the canonical line given to the sink (std)

	// the last time parsed, and its text
	lastTime     Time
	lastTimeText []byte
	haveTime     bool

	unmatched     map[string]bool
	unmatchedMore int64

	// Lines that are not blank, the first of them, and how many of them
	// a conversion rule matched: a log of which no rule matches a line is
	// not one the rules are for (ReadAll).
	text, matched int64
	firstN        int64
	firstLine     string
}

// NewReader builds the state and compiles the rules of a setup.
func NewReader(s *Setup, sink Sink, rep Reporter) (*Reader, error) {
	st, err := NewState(s.Res, s.Types)
	if err != nil {
		return nil, err
	}
	u, err := LookupTimeUnit(s.Res.TimeScale)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", s.Res.Path, err)
	}
	radix := s.Res.TimeRadix
	if radix == 0 {
		radix = 10
	}
	if radix < 2 || radix > 36 {
		return nil, fmt.Errorf("%s: TimeRadix %d: expected 2 to 36", s.Res.Path, radix)
	}
	st.SetTimeBase(radix, u)
	r := &Reader{St: st, Radix: radix, Unit: u, sink: sink, rep: rep, warnings: s.Warnings, cpu: schema.NoCPU, unmatched: map[string]bool{}}
	if len(s.Rules) > 0 {
		if r.Conv, err = Compile(s.Rules, st, DefaultLineBudget); err != nil {
			return nil, err
		}
	}
	return r, nil
}

// ReadAll reads every line of src (file names it in messages); fmp reads
// TOPPERS/FMP lines: [TIME]:[PRC]: message, ordered by time. With
// conversion rules, a log that has lines but of which no rule matches one
// is an error at its first line (with --skip-bad too: no line was bad, and
// the run would read nothing): it is not a log the rules are for (a file
// of another format, the wrong resource file).
func (r *Reader) ReadAll(ctx context.Context, src *ingest.Source, file string, fmp bool) error {
	if err := r.readAll(ctx, src, file, fmp); err != nil {
		return err
	}
	if r.Conv == nil || r.text == 0 || r.matched > 0 {
		return nil
	}
	hint := "another format, or the wrong resource file?"
	if _, err := ParseStdLine(r.firstLine); err == nil {
		hint = "it is a standard-format line: is the log converted already? Then read it without conversion rules"
	}
	return &schema.InputError{File: file, Line: r.firstN, Offset: -1, Msg: fmt.Sprintf(
		"expected a line that a conversion rule of %s matches, found none in %s, the first %q (%s)",
		r.Conv.SetNames(), nonBlank(r.text), clip(r.firstLine, 60), hint)}
}

// nonBlank is "N lines that are not blank".
func nonBlank(n int64) string {
	if n == 1 {
		return "1 line that is not blank"
	}
	return fmt.Sprintf("%d lines that are not blank", n)
}

// clip returns s cut to at most n bytes (at a rune), "..." marking a cut.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "..."
}

func (r *Reader) readAll(ctx context.Context, src *ingest.Source, file string, fmp bool) error {
	lr := ingest.NewLineReader(src)
	what := "TLV standard-format"
	if r.Conv != nil {
		what = "log"
	}
	if fmp {
		o := newReorder(r)
		err := lr.Each(ctx, file, what, func(line []byte, n int64) error {
			return o.push(line, n)
		})
		if err != nil {
			return err
		}
		return o.flush()
	}
	first := true
	return lr.Each(ctx, file, what, func(line []byte, n int64) error {
		if first {
			line = bytes.TrimPrefix(line, []byte("\xef\xbb\xbf"))
			first = false
		}
		// Line keeps nothing of the text (its parses and notes copy what
		// they keep): no copy of each line.
		return r.Line(unsafe.String(unsafe.SliceData(line), len(line)), n, schema.NoCPU)
	})
}

// Line reads one line of the log (n is its number, cpu its processor);
// it keeps nothing of the text after it returns.
func (r *Reader) Line(text string, n int64, cpu schema.CPU) error {
	r.src, r.cpu, r.rawLine = n, cpu, text
	if strings.TrimSpace(text) == "" {
		return nil
	}
	if r.text++; r.text == 1 {
		r.firstN, r.firstLine = n, strings.Clone(strings.TrimSpace(text))
	}
	if r.Conv == nil {
		return r.std(text, nil, -1)
	}
	matched, err := r.Conv.Convert(text, n, r.std, r.problem)
	if err != nil {
		if located := (*schema.InputError)(nil); errors.As(err, &located) {
			return err // r.std's: it names the file and line already
		}
		return r.rep.Bad(n, "%v", err)
	}
	if !matched {
		r.noRule(text, n)
	} else {
		r.matched++
	}
	return nil
}

func (r *Reader) problem(p Problem) {
	r.rep.Note(schema.Warning, "problem\x00"+strconv.Itoa(p.Rule.index)+"\x00"+p.Msg, r.src,
		fmt.Sprintf("%s: %s; first at line %d: %q", p.Rule.Name(), p.Msg, r.src, r.rawLine))
}

// maxUnmatchedClasses bounds the classes of unmatched lines recorded.
const maxUnmatchedClasses = 200

// noRule counts a line no rule matches, by its shape: the line with runs
// of digits as "{n}" (so "task1 is running (001)." and "task2 is running
// (002)." count together), its own braces doubled, so that no character
// of the line reads as the placeholder ("#1#slp_tsk()" is "#{n}#slp_tsk()").
func (r *Reader) noRule(text string, n int64) {
	if _, err := ParseStdLine(text); err == nil {
		r.rep.Note(schema.Warning, "stdlike", n, fmt.Sprintf(
			"lines in the TLV standard format that no conversion rule matches (skipped): is the log converted already? Then read it without conversion rules; first at line %d: %q", n, text))
	}
	class := lineClass(text)
	if !r.unmatched[class] && len(r.unmatched) >= maxUnmatchedClasses {
		r.rep.Note(schema.Info, "nomatch-more", n, fmt.Sprintf("lines no rule matches, of more than %d shapes: the others are counted here; first at line %d: %q", maxUnmatchedClasses, n, text))
		return
	}
	r.unmatched[class] = true
	r.rep.Note(schema.Info, "nomatch\x00"+class, n, fmt.Sprintf("no rule matches lines like %q (skipped); first at line %d: %q", class, n, text))
}

func lineClass(s string) string {
	var b strings.Builder
	digits := false
	for _, c := range strings.TrimSpace(s) {
		if c >= '0' && c <= '9' {
			if !digits {
				b.WriteString("{n}")
			}
			digits = true
			continue
		}
		digits = false
		b.WriteRune(c)
		if c == '{' || c == '}' {
			b.WriteRune(c)
		}
		if b.Len() > 80 {
			b.WriteString("...")
			break
		}
	}
	return b.String()
}

// std applies one standard-format line; rule is the rule that produced
// it (nil when the log is in the standard format).
func (r *Reader) std(text string, rule *crule, prc int) error {
	e, tm, err := r.parse(text)
	if err != nil {
		if rule != nil {
			return r.rep.Bad(r.src, "%s produced %q, not a standard-format line: column %v", rule.Name(), text, err)
		}
		return r.rep.Bad(r.src, "column %v", err)
	}
	l := &e.l
	// The line as TLV writes it: text itself, when it has no white space
	// to take out (the canonical line is text less some white space: of
	// the same length, it is text).
	canon := text
	if len(tm)+l.canonicalLen() != len(text) {
		r.canon = l.appendCanonical(r.canon[:0], tm)
		canon = unsafe.String(unsafe.SliceData(r.canon), len(r.canon))
	}
	if err := r.sink.Std(canon, r.src); err != nil {
		return err
	}
	// The lines a rule makes of one raw line share its time.
	t, err := r.lastTime, error(nil)
	if tm != string(r.lastTimeText) || !r.haveTime {
		if t, err = ParseTime(tm, r.Radix, r.Unit); err == nil {
			r.lastTime, r.lastTimeText, r.haveTime = t, append(r.lastTimeText[:0], tm...), true
		}
	}
	if err != nil {
		if rule != nil {
			return r.rep.Bad(r.src, "%s produced %q: %v", rule.Name(), text, err)
		}
		return r.rep.Bad(r.src, "column 2: expected a time in radix %d, found %q (%v)", r.Radix, tm, err)
	}
	if msg := r.sink.TimeOutOfBounds(t.NS); msg != "" {
		return r.rep.Bad(r.src, "column 2: %s", msg)
	}
	if !t.Exact && !t.HasRaw {
		r.rep.Note(schema.Info, "inexact", r.src, fmt.Sprintf("time %q is not a whole number of ns: rounded down (first at line %d)", tm, r.src))
	}
	sel := r.sel
	if l.Cond == nil {
		// A name: what it designates never changes.
		if !e.named {
			e.sel, e.selErr = r.St.Select(nil, l.Res, nil, 0, false)
			e.named = true
		}
		sel, err = e.sel, e.selErr
	} else {
		r.sel, err = r.St.Select(r.sel, l.Res, l.Cond, t.NS, true)
		sel = r.sel
	}
	if err != nil {
		r.rep.Note(schema.Warning, "select\x00"+l.Res, r.src, fmt.Sprintf("%v: line skipped (first at line %d: %q)", err, r.src, text))
		return nil
	}
	ev := &r.ev
	*ev = Event{Time: t, Src: r.src, CPU: r.cpu, Attr: -1}
	if prc >= 0 {
		ev.CPU = schema.CPU(prc)
	}
	for _, res := range sel {
		ev.Res = res
		if l.Behavior {
			if e.behavior(res) == nil {
				r.rep.Note(schema.Info, "behavior\x00"+res.Type.def.Name+"\x00"+l.Member, r.src,
					fmt.Sprintf("behavior %s.%s is not declared in the resource header: its arguments are named arg1, arg2, ... (first at line %d)", res.Type.def.Name, l.Member, r.src))
			}
			ev.Behavior, ev.Args = l.Member, l.Args
		} else {
			k, declared := e.attr(r.St, res)
			if !declared {
				r.rep.Note(schema.Info, "attr\x00"+res.Type.def.Name+"\x00"+l.Member, r.src,
					fmt.Sprintf("attribute %s.%s is not declared in the resource header (first at line %d)", res.Type.def.Name, l.Member, r.src))
			} else if res.Static(k) {
				r.rep.Note(schema.Info, "static\x00"+res.Type.def.Name+"\x00"+l.Member, r.src,
					fmt.Sprintf("attribute %s.%s is Static but the trace changes it (first at line %d)", res.Type.def.Name, l.Member, r.src))
			}
			r.St.Set(res, k, t.NS, l.Value)
			ev.Attr, ev.Value = k, l.Value
		}
		if err := r.sink.Event(ev); err != nil {
			return err
		}
	}
	return nil
}

// restEntry is the parse of the part of a standard-format line after its
// time (Time is ""), and what it resolves to that does not change: the
// resources a name designates, and the member's declaration in the type
// of the last resource it was read for.
type restEntry struct {
	l      StdLine
	named  bool // sel, selErr: Select of a name without a condition
	sel    []*Res
	selErr error
	typ    *typeInfo    // the type k, declared, bdef are of (nil: none yet)
	k      int          // the attribute's number
	decl   bool         // the attribute is declared in the header
	bdef   *BehaviorDef // the behavior's declaration
}

// behavior returns the declaration of the line's behavior in res's type.
func (e *restEntry) behavior(res *Res) *BehaviorDef {
	if e.typ != res.Type {
		e.typ, e.bdef = res.Type, res.Type.behavior[e.l.Member]
	}
	return e.bdef
}

// attr is State.Attr of the line's attribute in res's type (an attribute
// declared once is so from then on, with the same number).
func (e *restEntry) attr(st *State, res *Res) (int, bool) {
	if e.typ != res.Type {
		e.k, e.decl = st.Attr(res, e.l.Member)
		e.typ = res.Type
	}
	return e.k, e.decl
}

// parse parses a standard-format line (ParseStdLine) that may not outlive
// the call (a rule's output, a line of the log): the strings of the line
// it returns do, but for its time (tm, a part of text; the entry's Time is
// ""). The part after the time recurs ("TASK1.state=RUNNING"): its parse
// is kept by that text, at most maxRests of them, so that a line whose
// rest was seen is not parsed again (nor copied). The entry is valid until
// the next call.
func (r *Reader) parse(text string) (e *restEntry, tm string, err error) {
	j := 0
	if len(text) > 0 && text[0] == '[' {
		j = 1
		for j < len(text) && isAlnum(text[j]) {
			j++
		}
		if j > 1 && j < len(text) && text[j] == '.' {
			j++
			for j < len(text) && isAlnum(text[j]) {
				j++
			}
		}
		if j == 1 || j >= len(text) || text[j] != ']' {
			j = 0
		}
	}
	if j > 0 {
		if e, ok := r.rests[text[j+1:]]; ok {
			return e, text[1:j], nil
		}
	}
	owned := strings.Clone(text)
	l, err := ParseStdLine(owned)
	if err != nil {
		return nil, "", err
	}
	tm, l.Time = l.Time, ""
	if j == 0 || len(text)-j-1 > maxRestLen {
		r.line = restEntry{l: l}
		return &r.line, tm, nil
	}
	if r.rests == nil || len(r.rests) >= maxRests {
		r.rests = map[string]*restEntry{}
	}
	e = &restEntry{l: l}
	r.rests[owned[j+1:]] = e
	return e, tm, nil
}

const (
	maxRests   = 4096
	maxRestLen = 256
)

// Finish reports what the reader counted.
func (r *Reader) Finish() {
	if r.Conv != nil {
		for _, d := range r.Conv.Disabled() {
			r.rep.Note(schema.Warning, "ruleoff\x00"+d.Rule, d.Line, d.Msg)
		}
	}
	if r.St.HistoryMisses > 0 {
		r.rep.Count(schema.Warning, 0, fmt.Sprintf("conditions that asked for a time older than the last %d changes of an attribute: they read the oldest change kept (count = such queries)", historyLen), r.St.HistoryMisses)
	}
}

// fmpLine is the prefix of a TOPPERS/FMP log line: [TIME]:[PRC]: or
// [TIME]:[PRC:TID]:
var fmpLine = regexp.MustCompile(`^\s*\[([0-9A-Za-z]+)\]:\[(\d+)(?::[^\]]*)?\]:`)

// fmpPrefix is fmpLine.FindStringSubmatch without the regexp: the time's
// and the processor's texts, ok false when the line does not begin so.
func fmpPrefix(s string) (tm, prc string, ok bool) {
	at, ok := fmpPrefixAt(s)
	if !ok {
		return "", "", false
	}
	return s[at[0]:at[1]], s[at[2]:at[3]], true
}

// fmpPrefixAt is fmpPrefix with the offsets of the time and the
// processor in s.
func fmpPrefixAt(s string) (at [4]int, ok bool) {
	i := 0
	for i < len(s) && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\f' || s[i] == '\r') {
		i++
	}
	if i >= len(s) || s[i] != '[' {
		return at, false
	}
	i++
	j := i
	for j < len(s) && alnum[s[j]] {
		j++
	}
	if j == i || len(s)-j < 3 || s[j:j+3] != "]:[" {
		return at, false
	}
	at[0], at[1] = i, j
	i = j + 3
	j = i
	for j < len(s) && s[j]-'0' <= 9 {
		j++
	}
	if j == i {
		return at, false
	}
	at[2], at[3] = i, j
	if j < len(s) && s[j] == ':' {
		for j < len(s) && s[j] != ']' {
			j++
		}
	}
	if len(s)-j < 2 || s[j:j+2] != "]:" {
		return at, false
	}
	return at, true
}

// reorder orders FMP lines by time within a window: each processor's
// lines are in order, but the processors' buffers are interleaved, so a
// line can be earlier than the one before it. At most reorderWindow lines
// wait; the earliest (time, then line number) goes on when there are more.
// A line older than one already passed on (it came more than the window
// late) goes on as it is, counted. The lines that wait are in two places:
// a queue of those that came in order (not earlier than the queue's
// last), and a heap of the others; the earliest is at the head of one of
// them. Most lines come in order: a heap of all of them cost a sift
// through 14 levels a line.
type reorder struct {
	r        *Reader
	arena    lineArena
	emit     func(text string, n int64, cpu schema.CPU) error // r.Line
	q        lineQueue
	h        lineHeap
	seen     int64
	maxNS    int64
	haveMax  bool
	lastOut  int64
	haveOut  bool
	late     int64
	tooLate  int64
	firstLat int64
	firstToo int64
}

const reorderWindow = 1 << 14

type pending struct {
	ns    int64
	n     int64
	cpu   schema.CPU
	text  string // in chunk (nil: a string of its own)
	chunk *arenaChunk
	time  Time     // the time parsed, when has
	tm    [2]int32 // where its text is in text
	has   bool
}

// lineArena holds the texts of the lines that wait in the reorder window:
// chunks of arenaChunkSize bytes, each used again once every line copied
// into it went on (Reader.Line keeps nothing of a line's text), so that
// reading a log allocates nothing per line. A line longer than a quarter
// of a chunk is a string of its own.
type lineArena struct {
	cur  *arenaChunk
	free []*arenaChunk
}

type arenaChunk struct {
	buf  []byte
	live int // lines in it that did not go on yet
}

const arenaChunkSize = 64 << 10

// copy returns a copy of line, and the chunk that holds it (nil: none).
func (a *lineArena) copy(line []byte) (string, *arenaChunk) {
	if len(line) > arenaChunkSize/4 {
		return string(line), nil
	}
	c := a.cur
	if c == nil || len(c.buf)+len(line) > cap(c.buf) {
		switch {
		case c != nil && c.live == 0:
			c.buf = c.buf[:0]
		case len(a.free) > 0:
			c = a.free[len(a.free)-1]
			a.free = a.free[:len(a.free)-1]
		default:
			c = &arenaChunk{buf: make([]byte, 0, arenaChunkSize)}
		}
		a.cur = c
	}
	start := len(c.buf)
	c.buf = append(c.buf, line...)
	c.live++
	return unsafe.String(unsafe.SliceData(c.buf[start:]), len(line)), c
}

// done is a line of chunk c that went on.
func (a *lineArena) done(c *arenaChunk) {
	if c == nil {
		return
	}
	if c.live--; c.live == 0 && c != a.cur {
		c.buf = c.buf[:0]
		a.free = append(a.free, c)
	}
}

func (p *pending) less(q *pending) bool {
	if p.ns != q.ns {
		return p.ns < q.ns
	}
	return p.n < q.n
}

// lineQueue is a ring of pending lines.
type lineQueue struct {
	buf        []pending
	head, size int
}

func (q *lineQueue) push(p pending) {
	if q.size == len(q.buf) {
		nb := make([]pending, max(64, 2*len(q.buf)))
		for i := 0; i < q.size; i++ {
			nb[i] = q.buf[(q.head+i)%len(q.buf)]
		}
		q.buf, q.head = nb, 0
	}
	q.buf[(q.head+q.size)%len(q.buf)] = p
	q.size++
}

func (q *lineQueue) front() *pending { return &q.buf[q.head] }
func (q *lineQueue) back() *pending  { return &q.buf[(q.head+q.size-1)%len(q.buf)] }

func (q *lineQueue) pop() pending {
	p := q.buf[q.head]
	q.buf[q.head] = pending{}
	q.head = (q.head + 1) % len(q.buf)
	q.size--
	return p
}

type lineHeap []pending

func (h lineHeap) less(i, j int) bool { return h[i].less(&h[j]) }

func (h *lineHeap) push(p pending) {
	*h = append(*h, p)
	i := len(*h) - 1
	for i > 0 {
		parent := (i - 1) / 2
		if !h.less(i, parent) {
			break
		}
		(*h)[i], (*h)[parent] = (*h)[parent], (*h)[i]
		i = parent
	}
}

func (h *lineHeap) pop() pending {
	old := *h
	top := old[0]
	last := len(old) - 1
	old[0] = old[last]
	old[last] = pending{}
	*h = old[:last]
	i := 0
	for {
		l, r := 2*i+1, 2*i+2
		small := i
		if l < last && h.less(l, small) {
			small = l
		}
		if r < last && h.less(r, small) {
			small = r
		}
		if small == i {
			break
		}
		(*h)[i], (*h)[small] = (*h)[small], (*h)[i]
		i = small
	}
	return top
}

func newReorder(r *Reader) *reorder { return &reorder{r: r, emit: r.Line} }

func (o *reorder) push(line []byte, n int64) error {
	if n == 1 {
		line = bytes.TrimPrefix(line, []byte("\xef\xbb\xbf"))
	}
	text, chunk := o.arena.copy(line)
	p := pending{n: n, cpu: schema.NoCPU, text: text, chunk: chunk}
	if at, ok := fmpPrefixAt(text); ok {
		tm, prc := text[at[0]:at[1]], text[at[2]:at[3]]
		if t, err := ParseTime(tm, o.r.Radix, o.r.Unit); err == nil {
			p.ns, p.time, p.has = t.NS, t, true
			p.tm = [2]int32{int32(at[0]), int32(at[1])}
			if c, ok := parseSmall(prc); ok {
				p.cpu = schema.CPU(c)
			} else if c, err := strconv.ParseInt(prc, 10, 32); err == nil {
				p.cpu = schema.CPU(c)
			}
			if o.haveMax && p.ns < o.maxNS {
				if o.late == 0 {
					o.firstLat = n
				}
				o.late++
			}
			if !o.haveMax || p.ns > o.maxNS {
				o.maxNS, o.haveMax = p.ns, true
			}
		} else {
			p.ns = o.maxNS
		}
	} else {
		p.ns = o.maxNS // a line without a time stays where it is
	}
	if o.q.size == 0 || !p.less(o.q.back()) {
		o.q.push(p)
	} else {
		o.h.push(p)
	}
	if o.q.size+len(o.h) > reorderWindow {
		return o.out()
	}
	return nil
}

func (o *reorder) out() error {
	var p pending
	if len(o.h) == 0 || o.q.size > 0 && o.q.front().less(&o.h[0]) {
		p = o.q.pop()
	} else {
		p = o.h.pop()
	}
	if o.haveOut && p.ns < o.lastOut {
		if o.tooLate == 0 {
			o.firstToo = p.n
		}
		o.tooLate++
	} else {
		o.lastOut, o.haveOut = p.ns, true
	}
	if p.has {
		// The rules' lines have the line's time: parsed already.
		o.r.lastTime, o.r.lastTimeText, o.r.haveTime = p.time, append(o.r.lastTimeText[:0], p.text[p.tm[0]:p.tm[1]]...), true
	}
	err := o.emit(p.text, p.n, p.cpu)
	o.arena.done(p.chunk)
	return err
}

func (o *reorder) flush() error {
	for o.q.size+len(o.h) > 0 {
		if err := o.out(); err != nil {
			return err
		}
	}
	if o.late > 0 {
		o.r.rep.Count(schema.Info, o.firstLat, fmt.Sprintf(
			"lines earlier than a line before them (the processors' logs interleave): read in time order, within %d lines (count = lines reordered; events.src_line keeps each line's number)", reorderWindow), o.late)
	}
	if o.tooLate > 0 {
		o.r.rep.Count(schema.Warning, o.firstToo, fmt.Sprintf(
			"lines more than %d lines late: read where they are, out of time order (count = such lines)", reorderWindow), o.tooLate)
	}
	return nil
}

// tableSink writes events, objects and state intervals (README.md in this
// directory documents the mapping).
type tableSink struct {
	w       *schema.RunWriter
	objs    []schema.ObjectID // by resource index
	classes []schema.Sym      // by type index, -1 when not made yet
	attrEv  [][]schema.Sym    // by type index
	cpus    *cpuModel
	waits   *waitModel
	started bool
	rd      *Reader
	args    []byte
	notes   map[string]schema.DiagID
	sev     schema.Event
	prevTS  int64 // latest event time, for events that go back
	states  map[stateKey]schema.Sym
}

func newTableSink(w *schema.RunWriter) *tableSink {
	return &tableSink{w: w, notes: map[string]schema.DiagID{}, states: map[stateKey]schema.Sym{}}
}

func (s *tableSink) Bad(src int64, format string, args ...any) error {
	return s.w.BadLine(src, format, args...)
}

// maxNotes bounds the distinct findings kept (a finding's key can hold
// data, a resource name the log made up): past it they are counted
// together.
const maxNotes = 2000

const moreNotes = "findings of more kinds than traceduck keeps apart: counted here together (the first is the message)"

func (s *tableSink) Note(sev schema.Severity, key string, src int64, msg string) {
	if _, ok := s.notes[key]; !ok && len(s.notes) >= maxNotes {
		key, msg = "\x00more", moreNotes+": "+msg
	}
	if id, ok := s.notes[key]; ok {
		s.w.DiagRepeat(id)
		return
	}
	s.notes[key] = s.w.Diag(sev, src, schema.NoSeq, msg)
}

// start creates the objects: every resource of the resource file, kind =
// its type, attrs = its Static attributes, native_id = its "id" when that
// is an integer.
func (s *tableSink) Count(sev schema.Severity, src int64, msg string, n int64) {
	id := s.w.Diag(sev, src, schema.NoSeq, msg)
	for i := int64(1); i < n; i++ {
		s.w.DiagRepeat(id)
	}
}

func (s *tableSink) start(rd *Reader, fmp bool) {
	s.rd = rd
	w := s.w
	for _, cw := range rd.warnings {
		w.Diag(schema.Warning, 0, schema.NoSeq, cw.Error())
	}
	res := rd.St.Resources()
	s.objs = make([]schema.ObjectID, len(res))
	for i, r := range res {
		id := w.Object(r.Type.def.Name, r.Name)
		s.objs[i] = id
		for k, a := range r.Type.attrs {
			if !a.static {
				continue
			}
			v, ok := r.Initial(k)
			if !ok {
				continue
			}
			w.SetAttr(id, a.name, typedValue(r, k, v))
			if a.name == "id" {
				if n, err := strconv.ParseInt(v, 10, 64); err == nil {
					w.SetNativeID(id, n)
				}
			}
		}
	}
	s.cpus = newCPUModel(s, rd, fmp)
	s.waits = newWaitModel(s)
	// the order of priorities: the first type that declares one says it
	var order *PriorityDef
	first := ""
	for _, name := range rd.St.TypeNames() {
		if pd := rd.St.Type(name).def.Priority; pd != nil {
			if order == nil {
				order, first = pd, name
				w.Priorities().SetLowerIsUrgent(pd.LowerFirst)
			} else if pd.LowerFirst != order.LowerFirst {
				w.Diag(schema.Warning, 0, schema.NoSeq, fmt.Sprintf("resource types %s and %s order their priorities differently: %s's order is kept", first, name, first))
			}
		}
	}
	w.SetTimeUnit(rd.Unit.Name, rd.Unit.NsPerUnit())
	if rd.Conv != nil {
		w.SetMeta("converted", true)
	}
	w.SetMeta("TimeScale", rd.Unit.Name)
	w.SetMeta("TimeRadix", rd.Radix)
}

// typedValue is an attribute value as JSON: a number or a boolean when
// the resource file wrote one, else text.
func typedValue(r *Res, k int, v string) any {
	if r.src != nil {
		for _, a := range r.src.Attributes {
			if a.Name == r.AttrName(k) {
				switch a.Kind {
				case KindNumber:
					return json.Number(a.Text)
				case KindBool:
					return a.Text == "true"
				}
				return v
			}
		}
	}
	if d := r.Type.attrs[k].def; d != nil && d.Default != nil {
		switch d.Default.Kind {
		case KindNumber:
			return json.Number(v)
		case KindBool:
			return v == "true"
		}
	}
	return v
}

func (s *tableSink) Std(string, int64) error { return nil }

func (s *tableSink) TimeOutOfBounds(ns int64) string { return s.w.TimeOutOfBounds(ns) }

// attrInstance is the instance of an attribute's state intervals: its
// number in the type, from 1.
func attrInstance(k int) int64 { return int64(k) + 1 }

func (s *tableSink) attrSym(t *typeInfo, k int) schema.Sym {
	for len(s.attrEv) <= t.index {
		s.attrEv = append(s.attrEv, nil)
	}
	syms := s.attrEv[t.index]
	if k < len(syms) {
		return syms[k]
	}
	for len(syms) <= k {
		syms = append(syms, s.w.Sym(t.attrs[len(syms)].name+"="))
	}
	s.attrEv[t.index] = syms
	return syms[k]
}

// stateSym is the symbol of the state "attr=value" of r's attribute k.
func (s *tableSink) stateSym(r *Res, k int, v string) schema.Sym {
	key := stateKey{r.Type, k, v}
	if sym, ok := s.states[key]; ok {
		return sym
	}
	sym := s.w.Sym(r.AttrName(k) + "=" + v)
	if len(s.states) < maxStateSyms {
		key.v = strings.Clone(v)
		s.states[key] = sym
	}
	return sym
}

// stateKey is a value of an attribute of a type (stateSym).
type stateKey struct {
	t *typeInfo
	k int
	v string
}

// maxStateSyms bounds the states whose symbols stateSym keeps: values can
// be made up by the log (an attribute per line).
const maxStateSyms = 1 << 16

func (s *tableSink) class(t *typeInfo) schema.Sym {
	for len(s.classes) <= t.index {
		s.classes = append(s.classes, -1)
	}
	c := s.classes[t.index]
	if c < 0 {
		c = s.w.Sym(t.def.Name)
		s.classes[t.index] = c
	}
	return c
}

// open starts the intervals of the initial values (resource file, else
// header Default) of every Dynamic attribute at the first event's time,
// marked truncated: the state was in force when the trace started.
func (s *tableSink) open(ts int64) error {
	s.started = true
	for i, r := range s.rd.St.Resources() {
		for k, a := range r.Type.attrs {
			v, ok := r.Initial(k)
			if !ok {
				continue
			}
			if err := s.priority(r, k, v, s.objs[i], ts, schema.NoSeq, 0); err != nil {
				return err
			}
			if a.static {
				continue
			}
			if err := s.w.TransitionFromStart(s.objs[i], attrInstance(k), ts, s.w.Sym(a.name+"="+v), schema.NoSeq, schema.NoCPU); err != nil {
				return err
			}
		}
	}
	return s.cpus.open(ts)
}

func (s *tableSink) Event(e *Event) error {
	if !s.started {
		if err := s.open(e.Time.NS); err != nil {
			return err
		}
		s.prevTS = e.Time.NS
	}
	if e.Time.NS < s.prevTS {
		s.Note(schema.Warning, "\x00backwards", e.Src, fmt.Sprintf("timestamps go backwards (%d ns after %d ns); events are kept in file order, state intervals are clamped", e.Time.NS, s.prevTS))
	}
	s.prevTS = max(s.prevTS, e.Time.NS)
	obj := s.objs[e.Res.Index]
	ctx, err := s.cpus.context(e)
	if err != nil {
		return err
	}
	ev := &s.sev
	*ev = schema.Event{TS: e.Time.NS, TSRaw: e.Time.Raw, HasRaw: e.Time.HasRaw, CPU: e.CPU, Class: s.class(e.Res.Type),
		Context: ctx, Object: obj, SourceInstance: schema.NoInstance, TargetInstance: schema.NoInstance, Line: e.Src}
	if e.Attr < 0 {
		ev.Event = s.w.Sym(e.Behavior)
		s.args = appendArgs(s.args[:0], e.Res.Type.behavior[e.Behavior], e.Args)
		ev.Args = s.args
		seq, err := s.w.Event(ev)
		if err != nil {
			return err
		}
		if err := s.waits.event(e, seq); err != nil {
			return err
		}
		return s.cpus.event(e, seq)
	}
	ev.Event = s.attrSym(e.Res.Type, e.Attr)
	ev.TargetInstance = attrInstance(e.Attr)
	ev.Value = unsafe.Slice(unsafe.StringData(e.Value), len(e.Value)) // copied by Event
	if ev.Value == nil {
		ev.Value = []byte{} // "" is a value, nil NULL
	}
	seq, err := s.w.Event(ev)
	if err != nil {
		return err
	}
	if err := s.w.Transition(obj, attrInstance(e.Attr), e.Time.NS, s.stateSym(e.Res, e.Attr, e.Value), seq, e.CPU); err != nil {
		return err
	}
	if err := s.priority(e.Res, e.Attr, e.Value, obj, e.Time.NS, seq, e.Src); err != nil {
		return err
	}
	if err := s.waits.event(e, seq); err != nil {
		return err
	}
	return s.cpus.event(e, seq)
}

// priority tells the priority model the value v of r's attribute k, when
// the header's key Priority names that attribute: r's base priority from
// ts on. A value that is not an integer is a warning and tells nothing.
func (s *tableSink) priority(r *Res, k int, v string, obj schema.ObjectID, ts int64, seq schema.Seq, src int64) error {
	pd := r.Type.def.Priority
	if pd == nil || r.AttrName(k) != pd.Attribute {
		return nil
	}
	n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
	if err != nil {
		s.Note(schema.Warning, "\x00priority", src, fmt.Sprintf("priority %s=%q of %s is not an integer: its priority is not known from here", pd.Attribute, v, r.Name))
		return nil
	}
	return s.w.Priorities().Base(obj, n, ts, seq)
}

// isContext reports whether r keeps the running context: a resource of
// type Context (TLV's TOPPERS headers) whose attribute name is the name of
// the resource that runs.
func isContext(r *Res) bool {
	_, ok := r.Type.attrIdx["name"]
	return ok && strings.EqualFold(r.Type.def.Name, "Context")
}

// contextCPU is the processor whose context a Context resource keeps,
// when its name says so: CurrentContext_PRC2 is processor 2's (the FMP
// rules' convention); otherwise it is the processor of the line that
// changes it (NoCPU for single-processor logs).
func contextCPU(r *Res) (schema.CPU, bool) {
	i := strings.LastIndex(strings.ToUpper(r.Name), "PRC")
	if i < 0 {
		return schema.NoCPU, false
	}
	n, err := strconv.ParseInt(r.Name[i+3:], 10, 32)
	if err != nil || n < 0 {
		return schema.NoCPU, false
	}
	return schema.CPU(n), true
}

// appendArgs writes behavior arguments as a JSON object with the names
// the header declares (arg1, arg2, ... for the others), values as text.
func appendArgs(b []byte, def *BehaviorDef, args []string) []byte {
	b = append(b, '{')
	for i, a := range args {
		if i > 0 {
			b = append(b, ',')
		}
		if def != nil && i < len(def.Arguments) {
			b = appendJSONString(b, def.Arguments[i].Name)
		} else {
			b = append(b, `"arg`...)
			b = strconv.AppendInt(b, int64(i+1), 10)
			b = append(b, '"')
		}
		b = append(b, ':')
		b = appendJSONString(b, a)
	}
	return append(b, '}')
}

// appendJSONString appends s as json.Marshal writes it: quoted as it is
// when it is printable ASCII without what json.Marshal escapes (" \ < >
// &), else by json.Marshal.
func appendJSONString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			v, _ := json.Marshal(s)
			return append(b, v...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

func (s *tableSink) finish(rd *Reader) error {
	rd.Finish()
	if err := s.cpus.finish(); err != nil {
		return err
	}
	s.w.SetMeta("resources", len(rd.St.Resources()))
	if rd.Conv != nil {
		s.w.SetMeta("rules", rd.Conv.Rules())
	}
	return nil
}
