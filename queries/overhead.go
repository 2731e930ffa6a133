package queries

// The tracing-overhead model (overhead.sql, docs/overhead-model.md): its
// parameter files, the probe spec format, loading both into a database
// and reading a prediction back.

import (
	"bufio"
	"bytes"
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

//go:embed overhead/*.tsv
var overheadFiles embed.FS

// PaperCPUHz is the clock of the machine the paper measured its
// parameters on (Pentium 4, 1.7 GHz): the default for converting cycles to
// time.
const PaperCPUHz = 1.7e9

// Bounds on the overhead model's input files: they are small, hand-written
// tables; a bigger file is a mistake, not something to allocate for.
const (
	maxOverheadFileBytes = 4 << 20
	maxOverheadLineBytes = 64 << 10
	maxECBCount          = 1_000_000
)

// colKind is what a parameter column holds.
type colKind int

const (
	colText        colKind = iota
	colName                // an identifier: letters, digits, '_', not starting with a digit
	colPattern             // a glob pattern, not empty
	colNumber              // a number >= 0, or empty (NULL)
	colCount               // an integer from 1 to maxECBCount, or empty
	colProb                // a number from 0 to 1, or empty
	colBool                // true/false/yes/no, or empty
	colEnum                // one of allowed, or empty
	colComposition         // NAME[:COUNT][@CYCLES] items joined by '+', or empty
)

type paramColumn struct {
	name     string
	kind     colKind
	required bool
	allowed  []string // colEnum
}

// paramFile is one bundled parameter file and the table it fills (the
// columns are the table's, in order).
type paramFile struct {
	file  string
	table string
	cols  []paramColumn
	key   int // columns [0, key) identify a row
}

var contexts = []string{"sys", "usr"}

var paramFiles = []paramFile{
	{file: "items.tsv", table: "overhead_items", key: 1, cols: []paramColumn{
		{name: "item", kind: colName, required: true},
		{name: "kind", kind: colEnum, required: true, allowed: []string{"instr", "bivar", "subr", "action", "agg"}},
		{name: "cycles", kind: colNumber},
		{name: "spread", kind: colNumber},
		{name: "mnemonics", kind: colText},
		{name: "paper_table", kind: colText},
		{name: "paper_row", kind: colText},
	}},
	{file: "providers.tsv", table: "overhead_providers", key: 1, cols: []paramColumn{
		{name: "provider", kind: colName, required: true},
		{name: "stage1", kind: colNumber},
		{name: "stage2", kind: colNumber},
		{name: "stage4", kind: colNumber},
		{name: "stage5", kind: colNumber},
		{name: "context", kind: colEnum, required: true, allowed: contexts},
		{name: "paper_row", kind: colText},
		{name: "note", kind: colText},
	}},
	{file: "constants.tsv", table: "overhead_constants", key: 1, cols: []paramColumn{
		{name: "name", kind: colName, required: true},
		{name: "value", kind: colNumber, required: true},
		{name: "unit", kind: colText},
		{name: "paper_table", kind: colText},
		{name: "paper_row", kind: colText},
		{name: "note", kind: colText},
	}},
	{file: "refresh.tsv", table: "overhead_refresh", key: 1, cols: []paramColumn{
		{name: "format", kind: colPattern, required: true},
		{name: "refresh_hz", kind: colNumber, required: true},
		{name: "datasize_bytes", kind: colNumber},
		{name: "aggregations", kind: colBool},
		{name: "chew_us", kind: colNumber},
		{name: "cost_c_us", kind: colNumber},
		{name: "note", kind: colText},
	}},
	{file: "probe_costs.tsv", table: "probe_costs", key: 3, cols: []paramColumn{
		{name: "format", kind: colPattern, required: true},
		{name: "class", kind: colPattern, required: true},
		{name: "event", kind: colPattern, required: true},
		{name: "provider", kind: colName},
		{name: "ecbs", kind: colCount},
		{name: "pred", kind: colComposition},
		{name: "prob", kind: colProb},
		{name: "action", kind: colComposition},
		{name: "cycles", kind: colNumber},
		{name: "context", kind: colEnum, allowed: contexts},
		{name: "note", kind: colText},
	}},
}

// requiredConstants are the constants.tsv rows the model cannot do
// without.
var requiredConstants = []string{"dvm_prepare", "ecb_prepare", "status_snapshot", "buf_snapshot",
	"agg_snapshot", "aggbuild", "bandwidth", "csw"}

// OverheadParamFiles lists the parameter files a --params directory may
// hold, each replacing the bundled file of that name.
func OverheadParamFiles() []string {
	out := make([]string, len(paramFiles))
	for i, f := range paramFiles {
		out[i] = f.file
	}
	return out
}

// BundledOverheadParam returns the text of one bundled parameter file.
func BundledOverheadParam(file string) ([]byte, error) {
	return overheadFiles.ReadFile("overhead/" + file)
}

// paramRow is one row of a parameter file: its values (nil for NULL) and
// where it was read.
type paramRow struct {
	line int
	vals []any
}

type paramTable struct {
	path string // as shown in errors
	rows []paramRow
}

// OverheadParams is a complete, checked set of the model's parameters.
type OverheadParams struct {
	tables map[string]*paramTable // by file name
}

// ReadOverheadParams reads the parameter files: from dir where it holds a
// file of that name, the bundled one otherwise (dir "" means all
// bundled). A dir that holds none of them is an error: it is surely not
// the directory meant.
func ReadOverheadParams(dir string) (*OverheadParams, error) {
	p := &OverheadParams{tables: map[string]*paramTable{}}
	found := 0
	for _, pf := range paramFiles {
		var (
			data []byte
			path string
			err  error
		)
		if dir != "" {
			path = filepath.Join(dir, pf.file)
			data, err = readBounded(path)
			if err == nil {
				found++
			} else if !errors.Is(err, fs.ErrNotExist) {
				return nil, err
			}
		}
		if data == nil {
			path = "bundled overhead/" + pf.file
			if data, err = BundledOverheadParam(pf.file); err != nil {
				return nil, err
			}
		}
		t, err := parseParamFile(pf, path, data)
		if err != nil {
			return nil, err
		}
		p.tables[pf.file] = t
	}
	if dir != "" && found == 0 {
		return nil, fmt.Errorf("%s: expected one or more of %s, found none", dir, strings.Join(OverheadParamFiles(), ", "))
	}
	if err := p.check(); err != nil {
		return nil, err
	}
	return p, nil
}

// readBounded reads a whole file of at most maxOverheadFileBytes.
func readBounded(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readAllBounded(path, f)
}

func readAllBounded(path string, r io.Reader) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, maxOverheadFileBytes+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(data) > maxOverheadFileBytes {
		return nil, fmt.Errorf("%s: expected at most %d bytes, found more", path, maxOverheadFileBytes)
	}
	return data, nil
}

// eachLine calls fn with every line of data and its number, lines ended by
// LF or CRLF.
func eachLine(path string, data []byte, fn func(line int, text string) error) error {
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 4096), maxOverheadLineBytes)
	n := 0
	for sc.Scan() {
		n++
		if err := fn(n, strings.TrimSuffix(sc.Text(), "\r")); err != nil {
			return err
		}
	}
	if errors.Is(sc.Err(), bufio.ErrTooLong) {
		return fmt.Errorf("%s:%d: expected a line of at most %d bytes, found a longer one", path, n+1, maxOverheadLineBytes)
	}
	return sc.Err()
}

// parseParamFile reads a parameter file: '#' comment lines and blank lines
// anywhere, a header line naming the columns in order, then one row per
// line, fields separated by tabs, an empty field meaning NULL.
func parseParamFile(pf paramFile, path string, data []byte) (*paramTable, error) {
	t := &paramTable{path: path}
	var header []string
	for _, c := range pf.cols {
		header = append(header, c.name)
	}
	wantHeader := strings.Join(header, "\t")
	seen := map[string]int{}
	gotHeader := false
	err := eachLine(path, data, func(line int, text string) error {
		if strings.TrimSpace(text) == "" || strings.HasPrefix(text, "#") {
			return nil
		}
		if !gotHeader {
			if text != wantHeader {
				return fmt.Errorf("%s:%d: expected the header %q, found %q", path, line, wantHeader, text)
			}
			gotHeader = true
			return nil
		}
		fields := strings.Split(text, "\t")
		if len(fields) != len(pf.cols) {
			return fmt.Errorf("%s:%d: expected %d tab-separated fields, found %d", path, line, len(pf.cols), len(fields))
		}
		row := paramRow{line: line, vals: make([]any, len(fields))}
		for i, c := range pf.cols {
			v, err := parseField(c, strings.TrimSpace(fields[i]))
			if err != nil {
				return fmt.Errorf("%s:%d: %s: %w", path, line, c.name, err)
			}
			row.vals[i] = v
		}
		key := fmt.Sprint(row.vals[:pf.key]...)
		if first, dup := seen[key]; dup {
			return fmt.Errorf("%s:%d: expected one row per %s, found %s again (first on line %d)",
				path, line, strings.Join(header[:pf.key], ", "), strings.Join(fields[:pf.key], " "), first)
		}
		seen[key] = line
		t.rows = append(t.rows, row)
		return nil
	})
	if err != nil {
		return nil, err
	}
	if !gotHeader {
		return nil, fmt.Errorf("%s:1: expected the header %q, found none", path, wantHeader)
	}
	return t, nil
}

var (
	nameRE   = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
	numberRE = regexp.MustCompile(`^[0-9]+(\.[0-9]+)?([eE][0-9]+)?$`)
	itemRE   = regexp.MustCompile(`^([A-Za-z_][A-Za-z0-9_]*)(:[0-9]+(\.[0-9]+)?)?(@[0-9]+(\.[0-9]+)?)?$`)
)

// parseField checks one field and returns its value: nil (NULL), string,
// float64, int64 or bool.
func parseField(c paramColumn, s string) (any, error) {
	if s == "" {
		if c.required {
			return nil, errors.New("expected a value, found an empty field")
		}
		return nil, nil
	}
	switch c.kind {
	case colName:
		if !nameRE.MatchString(s) {
			return nil, fmt.Errorf("expected a name (letters, digits, _), found %q", s)
		}
	case colPattern:
		if strings.ContainsAny(s, " \t") {
			return nil, fmt.Errorf("expected a glob pattern without spaces, found %q", s)
		}
	case colNumber:
		return parseNumber(s)
	case colCount:
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil || n < 1 || n > maxECBCount {
			return nil, fmt.Errorf("expected a whole number from 1 to %d, found %q", maxECBCount, s)
		}
		return n, nil
	case colProb:
		f, err := parseNumber(s)
		if err != nil || f > 1 {
			return nil, fmt.Errorf("expected a probability from 0 to 1, found %q", s)
		}
		return f, nil
	case colBool:
		switch strings.ToLower(s) {
		case "true", "yes":
			return true, nil
		case "false", "no":
			return false, nil
		}
		return nil, fmt.Errorf("expected true or false, found %q", s)
	case colEnum:
		for _, a := range c.allowed {
			if s == a {
				return s, nil
			}
		}
		return nil, fmt.Errorf("expected one of %s, found %q", strings.Join(c.allowed, ", "), s)
	case colComposition:
		if _, err := parseComposition(s); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// parseNumber reads a plain decimal number >= 0 (no sign, no hex, no
// infinities: parameters are cycles, rates and sizes).
func parseNumber(s string) (float64, error) {
	if !numberRE.MatchString(s) {
		return 0, fmt.Errorf("expected a number >= 0, found %q", s)
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return 0, fmt.Errorf("expected a number >= 0, found %q", s)
	}
	return f, nil
}

// compItem is one item of a composition: NAME[:COUNT][@CYCLES].
type compItem struct {
	name   string
	count  float64
	cycles float64
	priced bool // @CYCLES given
}

// parseComposition reads items joined by '+' (the form overhead_cycles in
// overhead.sql sums).
func parseComposition(s string) ([]compItem, error) {
	var out []compItem
	for _, tok := range strings.Split(s, "+") {
		tok = strings.TrimSpace(tok)
		m := itemRE.FindStringSubmatch(tok)
		if m == nil {
			return nil, fmt.Errorf("expected NAME[:COUNT][@CYCLES] items joined by +, found %q", tok)
		}
		it := compItem{name: m[1], count: 1}
		if m[2] != "" {
			it.count, _ = strconv.ParseFloat(m[2][1:], 64)
		}
		if m[4] != "" {
			it.cycles, _ = strconv.ParseFloat(m[4][1:], 64)
			it.priced = true
		}
		out = append(out, it)
	}
	return out, nil
}

// check makes sure the files fit together: the constants the model needs
// are there, and every provider and item probe_costs names exists.
func (p *OverheadParams) check() error {
	consts := p.tables["constants.tsv"]
	have := map[string]float64{}
	for _, r := range consts.rows {
		have[r.vals[0].(string)] = r.vals[1].(float64)
	}
	for _, name := range requiredConstants {
		if _, ok := have[name]; !ok {
			return fmt.Errorf("%s: expected a row named %s, found none", consts.path, name)
		}
	}
	if have["bandwidth"] <= 0 {
		return fmt.Errorf("%s: bandwidth: expected a number > 0, found 0", consts.path)
	}
	pc := p.tables["probe_costs.tsv"]
	for _, r := range pc.rows {
		provider, _ := r.vals[3].(string)
		pred, _ := r.vals[5].(string)
		prob, hasProb := r.vals[6].(float64)
		action, _ := r.vals[7].(string)
		_, hasCycles := r.vals[8].(float64)
		where := fmt.Sprintf("%s:%d", pc.path, r.line)
		switch {
		case provider == "" && !hasCycles:
			return fmt.Errorf("%s: expected a provider or cycles, found neither", where)
		case provider != "" && !p.hasProvider(provider):
			return fmt.Errorf("%s: provider: expected one of %s, found %q", where, strings.Join(p.providers(), ", "), provider)
		case pred != "" && !hasProb:
			return fmt.Errorf("%s: prob: expected the predicate's probability of being true, found an empty field", where)
		case pred == "" && hasProb:
			return fmt.Errorf("%s: pred: expected a predicate for prob %g, found an empty field", where, prob)
		}
		for _, c := range []struct{ col, comp string }{{"pred", pred}, {"action", action}} {
			if err := p.checkComposition(c.comp); err != nil {
				return fmt.Errorf("%s: %s: %w", where, c.col, err)
			}
		}
	}
	return nil
}

func (p *OverheadParams) hasProvider(name string) bool {
	for _, r := range p.tables["providers.tsv"].rows {
		if r.vals[0] == name {
			return true
		}
	}
	return false
}

func (p *OverheadParams) providers() []string {
	var out []string
	for _, r := range p.tables["providers.tsv"].rows {
		out = append(out, r.vals[0].(string))
	}
	return out
}

// checkComposition makes sure every item of a composition has a price:
// the item exists with cycles, or @CYCLES gives them.
func (p *OverheadParams) checkComposition(comp string) error {
	if comp == "" {
		return nil
	}
	items, err := parseComposition(comp)
	if err != nil {
		return err
	}
	for _, it := range items {
		if it.priced {
			continue
		}
		cycles, known := p.itemCycles(it.name)
		switch {
		case !known:
			return fmt.Errorf("expected an item of %s (or NAME@CYCLES), found %q", p.tables["items.tsv"].path, it.name)
		case cycles == nil:
			return fmt.Errorf("expected %s@CYCLES: the paper gives %s no cost of its own, found %q", it.name, it.name, it.name)
		}
	}
	return nil
}

func (p *OverheadParams) itemCycles(name string) (cycles any, known bool) {
	for _, r := range p.tables["items.tsv"].rows {
		if r.vals[0] == name {
			return r.vals[2], true
		}
	}
	return nil, false
}

// Load replaces the contents of the parameter tables with these
// parameters, in one transaction. The tables exist in every database with
// the queries installed (overhead.sql); spec sessions are left alone.
func (p *OverheadParams) Load(ctx context.Context, db *sql.DB) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	for _, pf := range paramFiles {
		if _, err := tx.ExecContext(ctx, "DELETE FROM "+pf.table); err != nil {
			return err
		}
		marks := strings.TrimSuffix(strings.Repeat("?, ", len(pf.cols)), ", ")
		stmt, err := tx.PrepareContext(ctx, "INSERT INTO "+pf.table+" VALUES ("+marks+")")
		if err != nil {
			return err
		}
		for _, r := range p.tables[pf.file].rows {
			if _, err := stmt.ExecContext(ctx, r.vals...); err != nil {
				stmt.Close()
				return fmt.Errorf("%s:%d: %w", p.tables[pf.file].path, r.line, err)
			}
		}
		stmt.Close()
	}
	return tx.Commit()
}

// OverheadSpec is a probe spec file: tracing sessions, their probes with
// firing rates, and each probe's ECBs.
type OverheadSpec struct {
	Path     string
	Sessions []*SpecSession
}

// SpecSession is one tracing program (one consumer process).
type SpecSession struct {
	Name          string
	Line          int
	RefreshHz     float64
	DatasizeBytes float64
	Aggregations  bool
	ChewUS        *float64 // chew&print per refresh; nil: 0
	CostCUS       *float64 // a fixed Cost_C per second; nil: computed
	Probes        []*SpecProbe
	Measured      *Measured // the session's measured overhead; nil: none
}

// Measured is the overhead measured for a spec session or a run, in
// percent of one CPU: Sys and Usr when measured apart (nil: not
// measured), Total always.
type Measured struct {
	Line     int
	Sys, Usr *float64
	Total    float64
	Source   string // FILE:LINE the figures come from
}

// SpecProbe is one enabled probe and how often it fires.
type SpecProbe struct {
	Name     string
	Line     int
	Provider string
	RateHz   float64
	Cycles   *float64 // the cost of one firing, when known; nil: from the ECBs
	Context  string   // sys, usr, or "" for the provider's
	ECBs     []*SpecECB
	// CyclesSpread is the largest deviation of Cycles (spread=); nil: 0.
	CyclesSpread *float64
	// RateSpreadHz is the largest deviation of RateHz (rate_spread=, in
	// Hz or a percentage of the rate).
	RateSpreadHz float64
}

// SpecECB is Count identical ECBs of a probe.
type SpecECB struct {
	Line   int
	Count  int64
	Pred   string
	Prob   *float64 // nil: no predicate
	Action string
}

// ParseOverheadSpec reads a probe spec (docs/overhead-model.md, "Probe
// spec"): '#' comments, and lines
//
//	session NAME [refresh=HZ] [datasize=BYTES] [aggregations=yes|no] [chew_us=US] [cost_c_us=US]
//	probe NAME provider=P rate=HZ [rate_spread=HZ|PCT%] [cycles=N [spread=N]] [context=sys|usr]
//	ecb [count=N] [pred=COMP prob=P] [action=COMP]
//	measured [sys=PCT] [usr=PCT]
//
// A probe belongs to the session above it (a session named after the
// file when there is none), an ecb line to the probe above it.
func ParseOverheadSpec(path string, r io.Reader) (*OverheadSpec, error) {
	data, err := readAllBounded(path, r)
	if err != nil {
		return nil, err
	}
	spec := &OverheadSpec{Path: path}
	var (
		session *SpecSession
		probe   *SpecProbe
	)
	sessionLines := map[string]int{}
	err = eachLine(path, data, func(line int, text string) error {
		if i := strings.IndexByte(text, '#'); i >= 0 {
			text = text[:i]
		}
		words := strings.Fields(text)
		if len(words) == 0 {
			return nil
		}
		at := func(format string, args ...any) error {
			return fmt.Errorf("%s:%d: %s", path, line, fmt.Sprintf(format, args...))
		}
		switch words[0] {
		case "session":
			if len(words) < 2 || strings.Contains(words[1], "=") {
				return at("expected a session name after session, found %s", foundWord(words, 1))
			}
			if first, dup := sessionLines[words[1]]; dup {
				return at("expected a new session name, found %q again (first on line %d)", words[1], first)
			}
			sessionLines[words[1]] = line
			session = &SpecSession{Name: words[1], Line: line, RefreshHz: 1}
			spec.Sessions = append(spec.Sessions, session)
			probe = nil
			return setKeys(words[2:], at, map[string]func(string) error{
				"refresh":      numberInto(&session.RefreshHz),
				"datasize":     numberInto(&session.DatasizeBytes),
				"aggregations": boolInto(&session.Aggregations),
				"chew_us":      optNumberInto(&session.ChewUS),
				"cost_c_us":    optNumberInto(&session.CostCUS),
			}, nil)
		case "probe":
			if len(words) < 2 || strings.Contains(words[1], "=") {
				return at("expected a probe name after probe, found %s", foundWord(words, 1))
			}
			if session == nil {
				name := strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
				session = &SpecSession{Name: name, Line: line, RefreshHz: 1}
				spec.Sessions = append(spec.Sessions, session)
				sessionLines[name] = line
			}
			for _, p := range session.Probes {
				if p.Name == words[1] {
					return at("expected a new probe name in session %s, found %q again (first on line %d)", session.Name, words[1], p.Line)
				}
			}
			probe = &SpecProbe{Name: words[1], Line: line}
			session.Probes = append(session.Probes, probe)
			var rate bool
			var rateSpread string
			return setKeys(words[2:], at, map[string]func(string) error{
				"rate_spread": func(s string) error {
					v, err := parseNumber(strings.TrimSuffix(s, "%"))
					if err != nil {
						return fmt.Errorf("expected a number >= 0 (Hz) or a percentage (1%%), found %q", s)
					}
					rateSpread = s
					probe.RateSpreadHz = v
					return nil
				},
				"spread": optNumberInto(&probe.CyclesSpread),
				"provider": func(s string) error {
					if !nameRE.MatchString(s) {
						return fmt.Errorf("expected a provider name, found %q", s)
					}
					probe.Provider = s
					return nil
				},
				"rate":    func(s string) error { rate = true; return numberInto(&probe.RateHz)(s) },
				"cycles":  optNumberInto(&probe.Cycles),
				"context": enumInto(&probe.Context, contexts),
			}, func() error {
				if probe.Provider == "" {
					return at("expected provider=NAME, found none")
				}
				if !rate {
					return at("expected rate=HZ, found none")
				}
				if probe.CyclesSpread != nil && probe.Cycles == nil {
					return at("expected cycles=N with spread=, found none (a probe's ECBs have the spreads of their items)")
				}
				if strings.HasSuffix(rateSpread, "%") {
					probe.RateSpreadHz = probe.RateHz * probe.RateSpreadHz / 100
				}
				return nil
			})
		case "ecb":
			if probe == nil {
				return at("expected a probe line before the first ecb, found ecb")
			}
			if probe.Cycles != nil {
				return at("expected no ecb lines for probe %s, whose cycles= give the cost of a firing, found ecb", probe.Name)
			}
			e := &SpecECB{Line: line, Count: 1}
			probe.ECBs = append(probe.ECBs, e)
			return setKeys(words[1:], at, map[string]func(string) error{
				"count": func(s string) error {
					n, err := parseField(paramColumn{kind: colCount, required: true}, s)
					if err != nil {
						return err
					}
					e.Count = n.(int64)
					return nil
				},
				"pred":   compositionInto(&e.Pred),
				"prob":   func(s string) error { return probInto(&e.Prob)(s) },
				"action": compositionInto(&e.Action),
			}, func() error {
				if e.Pred != "" && e.Prob == nil {
					return at("expected prob=P (the predicate's probability of being true) with pred=, found none")
				}
				if e.Pred == "" && e.Prob != nil {
					return at("expected pred=COMP with prob=, found none")
				}
				return nil
			})
		case "measured":
			if session == nil {
				return at("expected a session line before measured, found measured")
			}
			if session.Measured != nil {
				return at("expected one measured line in session %s, found another (first on line %d)", session.Name, session.Measured.Line)
			}
			m := &Measured{Line: line, Source: fmt.Sprintf("%s:%d", path, line)}
			session.Measured = m
			return setKeys(words[1:], at, map[string]func(string) error{
				"sys": optNumberInto(&m.Sys),
				"usr": optNumberInto(&m.Usr),
			}, func() error {
				if m.Sys == nil && m.Usr == nil {
					return at("expected sys=PCT or usr=PCT (percent of one CPU), found none")
				}
				if m.Sys != nil {
					m.Total += *m.Sys
				}
				if m.Usr != nil {
					m.Total += *m.Usr
				}
				return nil
			})
		}
		return at("expected session, probe, ecb or measured, found %q", words[0])
	})
	if err != nil {
		return nil, err
	}
	if len(spec.Sessions) == 0 {
		return nil, fmt.Errorf("%s: expected a probe line, found none", path)
	}
	for _, s := range spec.Sessions {
		if len(s.Probes) == 0 {
			return nil, fmt.Errorf("%s:%d: expected probe lines in session %s, found none", path, s.Line, s.Name)
		}
	}
	return spec, nil
}

func foundWord(words []string, i int) string {
	if i < len(words) {
		return strconv.Quote(words[i])
	}
	return "nothing"
}

// setKeys applies key=value words, then done (when not nil).
func setKeys(words []string, at func(string, ...any) error, keys map[string]func(string) error, done func() error) error {
	given := map[string]bool{}
	for _, w := range words {
		k, v, ok := strings.Cut(w, "=")
		set, known := keys[k]
		if !ok || !known {
			var names []string
			for n := range keys {
				names = append(names, n+"=")
			}
			sort.Strings(names)
			return at("expected one of %s, found %q", strings.Join(names, " "), w)
		}
		if given[k] {
			return at("expected %s= once, found it again", k)
		}
		given[k] = true
		if err := set(v); err != nil {
			return at("%s: %v", k, err)
		}
	}
	if done != nil {
		return done()
	}
	return nil
}

func numberInto(p *float64) func(string) error {
	return func(s string) error {
		f, err := parseNumber(s)
		*p = f
		return err
	}
}

func optNumberInto(p **float64) func(string) error {
	return func(s string) error {
		f, err := parseNumber(s)
		*p = &f
		return err
	}
}

func probInto(p **float64) func(string) error {
	return func(s string) error {
		v, err := parseField(paramColumn{kind: colProb, required: true}, s)
		if err != nil {
			return err
		}
		f := v.(float64)
		*p = &f
		return nil
	}
}

func boolInto(p *bool) func(string) error {
	return func(s string) error {
		v, err := parseField(paramColumn{kind: colBool, required: true}, s)
		if err != nil {
			return err
		}
		*p = v.(bool)
		return nil
	}
}

func enumInto(p *string, allowed []string) func(string) error {
	return func(s string) error {
		v, err := parseField(paramColumn{kind: colEnum, required: true, allowed: allowed}, s)
		if err != nil {
			return err
		}
		*p = v.(string)
		return nil
	}
}

func compositionInto(p *string) func(string) error {
	return func(s string) error {
		if _, err := parseComposition(s); err != nil {
			return err
		}
		*p = s
		return nil
	}
}

// Check makes sure every provider and item the spec names has a price in
// the parameters.
func (s *OverheadSpec) Check(p *OverheadParams) error {
	for _, ses := range s.Sessions {
		for _, pr := range ses.Probes {
			if pr.Cycles == nil && !p.hasProvider(pr.Provider) {
				return fmt.Errorf("%s:%d: provider: expected one of %s, found %q", s.Path, pr.Line, strings.Join(p.providers(), ", "), pr.Provider)
			}
			for _, e := range pr.ECBs {
				for _, c := range []struct{ col, comp string }{{"pred", e.Pred}, {"action", e.Action}} {
					if err := p.checkComposition(c.comp); err != nil {
						return fmt.Errorf("%s:%d: %s: %w", s.Path, e.Line, c.col, err)
					}
				}
			}
		}
	}
	return nil
}

// SessionNames lists the spec's sessions in file order.
func (s *OverheadSpec) SessionNames() []string {
	var out []string
	for _, ses := range s.Sessions {
		out = append(out, ses.Name)
	}
	return out
}

// Load writes the spec's sessions into the spec tables, replacing any
// sessions of the same names, in one transaction.
func (s *OverheadSpec) Load(ctx context.Context, db *sql.DB) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	for _, ses := range s.Sessions {
		for _, t := range []string{"overhead_spec_sessions", "overhead_spec_probes", "overhead_spec_ecbs"} {
			if _, err := tx.ExecContext(ctx, "DELETE FROM "+t+" WHERE session = ?", ses.Name); err != nil {
				return err
			}
		}
		if _, err := tx.ExecContext(ctx, "DELETE FROM overhead_measured WHERE run_sha256 IS NULL AND session = ?", ses.Name); err != nil {
			return err
		}
		if m := ses.Measured; m != nil {
			if _, err := tx.ExecContext(ctx, "INSERT INTO overhead_measured VALUES (?, NULL, ?, ?, ?, ?)",
				ses.Name, nullFloat(m.Sys), nullFloat(m.Usr), m.Total, m.Source); err != nil {
				return err
			}
		}
		if _, err := tx.ExecContext(ctx, "INSERT INTO overhead_spec_sessions VALUES (?, ?, ?, ?, ?, ?)",
			ses.Name, ses.RefreshHz, ses.DatasizeBytes, ses.Aggregations, nullFloat(ses.ChewUS), nullFloat(ses.CostCUS)); err != nil {
			return err
		}
		for _, p := range ses.Probes {
			if _, err := tx.ExecContext(ctx, "INSERT INTO overhead_spec_probes "+
				"(session, probe, provider, rate_hz, cycles, context, cycles_spread, rate_spread_hz) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
				ses.Name, p.Name, p.Provider, p.RateHz, nullFloat(p.Cycles), nullString(p.Context),
				nullFloat(p.CyclesSpread), p.RateSpreadHz); err != nil {
				return err
			}
			for i, e := range p.ECBs {
				if _, err := tx.ExecContext(ctx, "INSERT INTO overhead_spec_ecbs VALUES (?, ?, ?, ?, ?, ?, ?)",
					ses.Name, p.Name, i+1, e.Count, nullString(e.Pred), nullFloat(e.Prob), nullString(e.Action)); err != nil {
					return err
				}
			}
		}
	}
	return tx.Commit()
}

func nullFloat(p *float64) any {
	if p == nil {
		return nil
	}
	return *p
}

func nullString(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// OverheadFilter selects what a prediction covers.
type OverheadFilter struct {
	RunID    int32    // > 0: that run
	AllRuns  bool     // every run
	Sessions []string // spec sessions, by name
}

// order sorts runs by number, then spec sessions in the order given.
func (f OverheadFilter) order() string {
	return "run_id NULLS FIRST, list_position([" + f.quotedSessions() + "]::VARCHAR[], session), session"
}

func (f OverheadFilter) quotedSessions() string {
	q := make([]string, len(f.Sessions))
	for i, s := range f.Sessions {
		q[i] = Literal(s)
	}
	return strings.Join(q, ", ")
}

func (f OverheadFilter) where() string {
	var or []string
	if f.AllRuns {
		or = append(or, "run_id IS NOT NULL")
	} else if f.RunID > 0 {
		or = append(or, fmt.Sprintf("run_id = %d", f.RunID))
	}
	if len(f.Sessions) > 0 {
		or = append(or, "(run_id IS NULL AND session IN ("+f.quotedSessions()+"))")
	}
	if len(or) == 0 {
		return "false"
	}
	return strings.Join(or, " OR ")
}

// OverheadSQL is the query that prints a prediction at cpuHz: one row per
// session or run (overhead_share), or with perProbe one row per probe
// (overhead_probe_share); runs by number, then spec sessions in the
// filter's order. low_pct and high_pct are the prediction's error band. Percentages are of one CPU, rounded to 4 decimals as the
// paper prints them.
func OverheadSQL(cpuHz float64, perProbe bool, f OverheadFilter) string {
	hz := strconv.FormatFloat(cpuHz, 'g', -1, 64)
	runCol := "run_id, "
	if !f.AllRuns && f.RunID == 0 {
		runCol = "" // spec sessions only
	}
	if perProbe {
		return "SELECT session, " + runCol + "probe, provider, context, firings, round(rate_hz, 2) AS rate_hz, ecbs, " +
			"round(cycles, 1) AS cycles, round(pct, 4) AS pct, cost_row, round(low_pct, 4) AS low_pct, round(high_pct, 4) AS high_pct\n" +
			"FROM overhead_probe_share(CAST(" + hz + " AS DOUBLE))\nWHERE " + f.where() +
			"\nORDER BY " + f.order() + ", pct DESC NULLS LAST, probe"
	}
	return "SELECT session, " + runCol + "probes, unpriced, round(sys_pct, 4) AS sys_pct, round(usr_pct, 4) AS usr_pct, " +
		"round(total_pct, 4) AS total_pct, round(low_pct, 4) AS low_pct, round(high_pct, 4) AS high_pct, round(cost_b_sys_pct, 4) AS cost_b_sys_pct, round(cost_b_usr_pct, 4) AS cost_b_usr_pct, " +
		"round(cost_c_pct, 4) AS cost_c_pct, round(cost_a_pct, 4) AS cost_a_pct\n" +
		"FROM overhead_share(CAST(" + hz + " AS DOUBLE))\nWHERE " + f.where() + "\nORDER BY " + f.order()
}

// OverheadShare is the predicted overhead of one session or run, in
// percent of one CPU (overhead_share).
type OverheadShare struct {
	Session            string
	RunID              int32 // 0 for a spec session
	Probes, Unpriced   int64
	CostBSys, CostBUsr float64 // probe firings, by context
	CostC, CostA       float64 // refreshes (sys), chew&print (usr)
	Sys, Usr, Total    float64
	Low, High          float64 // the band around Total (overhead_share's low_pct, high_pct)
}

// PredictOverhead reads overhead_share at cpuHz for what f selects,
// unrounded, in OverheadSQL's order.
func PredictOverhead(ctx context.Context, db *sql.DB, cpuHz float64, f OverheadFilter) ([]OverheadShare, error) {
	rows, err := db.QueryContext(ctx, "SELECT session, coalesce(run_id, 0), probes, unpriced, cost_b_sys_pct, cost_b_usr_pct, "+
		"cost_c_pct, cost_a_pct, sys_pct, usr_pct, total_pct, low_pct, high_pct FROM overhead_share(CAST(? AS DOUBLE)) WHERE "+f.where()+
		" ORDER BY "+f.order(), cpuHz)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []OverheadShare
	for rows.Next() {
		var s OverheadShare
		var costC, sys, total, low, high sql.NullFloat64
		if err := rows.Scan(&s.Session, &s.RunID, &s.Probes, &s.Unpriced, &s.CostBSys, &s.CostBUsr,
			&costC, &s.CostA, &sys, &s.Usr, &total, &low, &high); err != nil {
			return nil, err
		}
		if !costC.Valid {
			return nil, errors.New("overhead_share: no refresh costs: the parameter tables are empty (load them with OverheadParams.Load)")
		}
		s.CostC, s.Sys, s.Total, s.Low, s.High = costC.Float64, sys.Float64, total.Float64, low.Float64, high.Float64
		out = append(out, s)
	}
	return out, rows.Err()
}
