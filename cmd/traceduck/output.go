package main

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"math/big"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/marcboeker/go-duckdb"
	"github.com/rivo/uniseg"
	"github.com/spf13/cobra"

	"github.com/traceduck/traceduck/internal/safetext"
)

// The --output formats of query.
const (
	outTable    = "table"
	outCSV      = "csv"
	outJSON     = "json"
	outMarkdown = "markdown"
)

var outputFormats = []string{outTable, outCSV, outJSON, outMarkdown}

// column is a result column: its name and its DuckDB type as DuckDB spells
// it (from DESCRIBE when that is known, which tells JSON from VARCHAR;
// from the driver otherwise).
type column struct {
	Name string
	Type string
}

func (c column) baseType() string {
	t := strings.ToUpper(strings.TrimSpace(c.Type))
	if i := strings.IndexByte(t, '('); i >= 0 {
		t = t[:i]
	}
	return t
}

// numeric reports whether the column holds numbers (right-aligned in table
// and markdown output).
func (c column) numeric() bool {
	switch c.baseType() {
	case "TINYINT", "SMALLINT", "INTEGER", "BIGINT", "HUGEINT",
		"UTINYINT", "USMALLINT", "UINTEGER", "UBIGINT", "UHUGEINT",
		"FLOAT", "REAL", "DOUBLE", "DECIMAL", "NUMERIC", "VARINT":
		return true
	}
	return false
}

func (c column) isJSON() bool { return c.baseType() == "JSON" }

// resultWriter writes one result set in one of the output formats.
type resultWriter interface {
	begin(cols []column) error
	row(vals []any) error
	end() error
}

// outputFlags are a command's --output and --safe-csv.
type outputFlags struct {
	format  string
	safeCSV bool
}

// addOutputFlags adds --output (one of formats) and --safe-csv.
func addOutputFlags(cmd *cobra.Command, o *outputFlags, formats []string) {
	cmd.Flags().VarP(enumValue{&o.format, formats}, "output", "o", "output format: "+strings.Join(formats, ", "))
	cmd.Flags().BoolVar(&o.safeCSV, "safe-csv", false, "with --output csv: a text cell that begins with = + - @, a tab or a carriage return gets a leading ' (a spreadsheet shows it instead of running it as a formula)")
	inner := cmd.PreRunE
	cmd.PreRunE = func(c *cobra.Command, args []string) error {
		if o.safeCSV && o.format != outCSV {
			return usagef("--safe-csv is for --output csv (the output is %s)", o.format)
		}
		if inner != nil {
			return inner(c, args)
		}
		return nil
	}
}

func newResultWriter(o outputFlags, w io.Writer) resultWriter {
	switch o.format {
	case outCSV:
		return &csvWriter{w: bufio.NewWriter(w), safe: o.safeCSV}
	case outJSON:
		return &jsonWriter{w: bufio.NewWriter(w)}
	case outMarkdown:
		return &gridWriter{w: w, markdown: true}
	default:
		return &gridWriter{w: w}
	}
}

// gridWriter is the table and markdown output: it keeps the rows to align
// the columns.
type gridWriter struct {
	w        io.Writer
	markdown bool
	cols     []column
	cells    [][]string
}

func (g *gridWriter) begin(cols []column) error {
	g.cols = cols
	return nil
}

func (g *gridWriter) row(vals []any) error {
	cells := make([]string, len(vals))
	for i, v := range vals {
		var s string
		if v == nil {
			s = "NULL"
		} else {
			s = formatValue(v, g.cols[i])
		}
		if g.markdown {
			s = markdownEscape(s)
		} else {
			s = tableEscape(s)
		}
		cells[i] = s
	}
	g.cells = append(g.cells, cells)
	return nil
}

func (g *gridWriter) end() error {
	if len(g.cols) == 0 {
		return nil
	}
	header := make([]string, len(g.cols))
	for i, c := range g.cols {
		if g.markdown {
			header[i] = markdownEscape(c.Name)
		} else {
			header[i] = tableEscape(c.Name)
		}
	}
	width := make([]int, len(g.cols))
	for i := range g.cols {
		width[i] = max(uniseg.StringWidth(header[i]), 1)
		if g.markdown {
			width[i] = max(width[i], 3)
		}
		for _, r := range g.cells {
			width[i] = max(width[i], uniseg.StringWidth(r[i]))
		}
	}
	bw := bufio.NewWriter(g.w)
	line := func(cells []string) {
		var b strings.Builder
		if g.markdown {
			b.WriteString("| ")
		}
		for i, s := range cells {
			if i > 0 {
				if g.markdown {
					b.WriteString(" | ")
				} else {
					b.WriteString("  ")
				}
			}
			pad := strings.Repeat(" ", width[i]-uniseg.StringWidth(s))
			if g.cols[i].numeric() {
				b.WriteString(pad + s)
			} else {
				b.WriteString(s + pad)
			}
		}
		if g.markdown {
			b.WriteString(" |")
		}
		bw.WriteString(strings.TrimRight(b.String(), " "))
		bw.WriteByte('\n')
	}
	line(header)
	rule := make([]string, len(g.cols))
	for i, c := range g.cols {
		switch {
		case !g.markdown:
			rule[i] = strings.Repeat("-", width[i])
		case c.numeric():
			rule[i] = strings.Repeat("-", width[i]-1) + ":"
		default:
			rule[i] = strings.Repeat("-", width[i])
		}
	}
	line(rule)
	for _, r := range g.cells {
		line(r)
	}
	return bw.Flush()
}

// tableEscape keeps a cell on one line, with nothing a terminal acts on
// (cellText).
func tableEscape(s string) string { return cellText(s) }

// markdownEscape keeps a cell inside its table cell and shows it as text:
// Markdown's characters escaped, line breaks as <br>, control characters
// as cellText shows them.
func markdownEscape(s string) string { return safetext.Markdown(s, "<br>") }

// csvWriter is RFC 4180: a header line, CRLF line ends, a field quoted
// when it holds a comma, a quote, a line break or leading or trailing
// space, quotes doubled; NULL is an empty field. Line breaks inside a
// field are kept as they are (encoding/csv would turn LF into CRLF there).
// The fields are the data, byte for byte, unless safe is set (--safe-csv):
// see formulaSafe.
type csvWriter struct {
	w    *bufio.Writer
	cols []column
	safe bool
}

func (c *csvWriter) begin(cols []column) error {
	c.cols = cols
	if len(cols) == 0 {
		return nil
	}
	for i, col := range cols {
		if c.safe {
			c.field(i, formulaSafe(col.Name))
		} else {
			c.field(i, col.Name)
		}
	}
	_, err := c.w.WriteString("\r\n")
	return err
}

func (c *csvWriter) field(i int, s string) {
	if i > 0 {
		c.w.WriteByte(',')
	}
	if s == "" || !strings.ContainsAny(s, ",\"\r\n") && s[0] != ' ' && s[0] != '\t' && s[len(s)-1] != ' ' && s[len(s)-1] != '\t' {
		c.w.WriteString(s)
		return
	}
	c.w.WriteByte('"')
	c.w.WriteString(strings.ReplaceAll(s, `"`, `""`))
	c.w.WriteByte('"')
}

func (c *csvWriter) row(vals []any) error {
	for i, v := range vals {
		s := ""
		if v != nil {
			s = formatValue(v, c.cols[i])
			if c.safe && !c.cols[i].numeric() {
				s = formulaSafe(s)
			}
		}
		c.field(i, s)
	}
	_, err := c.w.WriteString("\r\n")
	return err
}

// formulaSafe is a text cell a spreadsheet shows instead of evaluating:
// Excel, LibreOffice and Google Sheets run a cell that begins with =, +,
// -, @ (or a tab or carriage return before one) as a formula, which can
// fetch URLs or run commands (CSV injection); a leading ' makes it text,
// shown without the '. Numbers are numeric columns' cells, left as they
// are (-5 stays a number).
func formulaSafe(s string) string {
	if s != "" && strings.IndexByte("=+-@\t\r", s[0]) >= 0 {
		return "'" + s
	}
	return s
}

func (c *csvWriter) end() error { return c.w.Flush() }

// jsonWriter writes an array of objects, one object per line, keys in
// column order. Numbers are JSON numbers, NULL is null, and the values of
// JSON columns are embedded as JSON.
type jsonWriter struct {
	w    *bufio.Writer
	cols []column
	keys []string
	n    int
}

func (j *jsonWriter) begin(cols []column) error {
	j.cols = cols
	j.keys = make([]string, len(cols))
	for i, c := range cols {
		j.keys[i] = jsonString(c.Name)
	}
	_, err := j.w.WriteString("[")
	return err
}

func (j *jsonWriter) row(vals []any) error {
	if j.n > 0 {
		j.w.WriteString(",")
	}
	j.n++
	j.w.WriteString("\n  {")
	for i, v := range vals {
		if i > 0 {
			j.w.WriteString(", ")
		}
		j.w.WriteString(j.keys[i])
		j.w.WriteString(": ")
		j.w.WriteString(jsonValue(v, j.cols[i]))
	}
	_, err := j.w.WriteString("}")
	return err
}

func (j *jsonWriter) end() error {
	if j.n > 0 {
		j.w.WriteString("\n")
	}
	j.w.WriteString("]\n")
	return j.w.Flush()
}

// jsonString is s as a JSON string, without HTML escaping.
func jsonString(s string) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)
	return strings.TrimSuffix(b.String(), "\n")
}

// jsonValue renders one value as JSON.
func jsonValue(v any, col column) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case bool:
		return strconv.FormatBool(x)
	case int8, int16, int32, int64, int, uint8, uint16, uint32, uint64, uint:
		return fmt.Sprint(x)
	case *big.Int:
		return x.String()
	case duckdb.Decimal:
		return formatDecimal(x)
	case float32:
		return jsonFloat(float64(x), 32)
	case float64:
		return jsonFloat(x, 64)
	case string:
		if col.isJSON() && json.Valid([]byte(x)) {
			var b bytes.Buffer
			if json.Compact(&b, []byte(x)) == nil {
				return b.String()
			}
		}
		return jsonString(x)
	case []any:
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = jsonValue(e, column{})
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		parts := make([]string, len(keys))
		for i, k := range keys {
			parts[i] = jsonString(k) + ": " + jsonValue(x[k], column{})
		}
		return "{" + strings.Join(parts, ", ") + "}"
	case duckdb.Map:
		type kv struct{ k, v string }
		var kvs []kv
		for k, e := range x {
			kvs = append(kvs, kv{formatValue(k, column{}), jsonValue(e, column{})})
		}
		sort.Slice(kvs, func(a, b int) bool { return kvs[a].k < kvs[b].k })
		parts := make([]string, len(kvs))
		for i, p := range kvs {
			parts[i] = jsonString(p.k) + ": " + p.v
		}
		return "{" + strings.Join(parts, ", ") + "}"
	default:
		return jsonString(formatValue(v, col))
	}
}

// jsonFloat writes a float as a JSON number; NaN and infinities, which
// JSON has no numbers for, as the strings DuckDB prints for them.
func jsonFloat(f float64, bits int) string {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return jsonString(formatFloat(f, bits))
	}
	return strconv.FormatFloat(f, 'g', -1, bits)
}

// formatValue renders a non-NULL value as text, the way DuckDB's own
// shell shows it where that is simple.
func formatValue(v any, col column) string {
	switch x := v.(type) {
	case nil:
		return "NULL"
	case string:
		return x
	case []byte:
		if col.baseType() == "UUID" && len(x) == 16 {
			h := hex.EncodeToString(x)
			return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
		}
		return formatBlob(x)
	case bool:
		return strconv.FormatBool(x)
	case int8, int16, int32, int64, int, uint8, uint16, uint32, uint64, uint:
		return fmt.Sprint(x)
	case float32:
		return formatFloat(float64(x), 32)
	case float64:
		return formatFloat(x, 64)
	case *big.Int:
		return x.String()
	case duckdb.Decimal:
		return formatDecimal(x)
	case time.Time:
		return formatTime(x, col)
	case duckdb.Interval:
		return formatInterval(x)
	case []any:
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = formatNested(e)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		parts := make([]string, len(keys))
		for i, k := range keys {
			parts[i] = "'" + k + "': " + formatNested(x[k])
		}
		return "{" + strings.Join(parts, ", ") + "}"
	case duckdb.Map:
		var parts []string
		for k, e := range x {
			parts = append(parts, formatNested(k)+"="+formatNested(e))
		}
		sort.Strings(parts)
		return "{" + strings.Join(parts, ", ") + "}"
	default:
		return fmt.Sprint(v)
	}
}

func formatNested(v any) string {
	if v == nil {
		return "NULL"
	}
	return formatValue(v, column{})
}

func formatFloat(f float64, bits int) string {
	switch {
	case math.IsNaN(f):
		return "nan"
	case math.IsInf(f, 1):
		return "inf"
	case math.IsInf(f, -1):
		return "-inf"
	}
	// Plain digits for the magnitudes durations and counts have (39985726,
	// not 3.9985726e+07); exponents only where plain would be unreadable.
	if a := math.Abs(f); a == 0 || (a >= 1e-4 && a < 1e15) {
		return strconv.FormatFloat(f, 'f', -1, bits)
	}
	return strconv.FormatFloat(f, 'g', -1, bits)
}

// formatDecimal renders a DECIMAL exactly, with its scale's digits.
func formatDecimal(d duckdb.Decimal) string {
	if d.Value == nil {
		return "NULL"
	}
	s := new(big.Int).Abs(d.Value).String()
	scale := int(d.Scale)
	if scale > 0 {
		if len(s) <= scale {
			s = strings.Repeat("0", scale-len(s)+1) + s
		}
		s = s[:len(s)-scale] + "." + s[len(s)-scale:]
	}
	if d.Value.Sign() < 0 {
		s = "-" + s
	}
	return s
}

func formatTime(t time.Time, col column) string {
	typ := strings.ToUpper(col.Type)
	switch {
	case typ == "DATE":
		return t.Format("2006-01-02")
	case typ == "TIME":
		return t.Format("15:04:05.999999")
	case typ == "TIMESTAMP_NS":
		return t.Format("2006-01-02 15:04:05.999999999")
	case strings.Contains(typ, "TIME ZONE") || typ == "TIMESTAMPTZ":
		return t.Format("2006-01-02 15:04:05.999999-07")
	default:
		return t.Format("2006-01-02 15:04:05.999999")
	}
}

func formatInterval(iv duckdb.Interval) string {
	var parts []string
	if y, m := iv.Months/12, iv.Months%12; y != 0 || m != 0 {
		if y != 0 {
			parts = append(parts, plural(int64(y), "year"))
		}
		if m != 0 {
			parts = append(parts, plural(int64(m), "month"))
		}
	}
	if iv.Days != 0 {
		parts = append(parts, plural(int64(iv.Days), "day"))
	}
	if iv.Micros != 0 || len(parts) == 0 {
		us := iv.Micros
		sign := ""
		if us < 0 {
			sign, us = "-", -us
		}
		d := time.Duration(us) * time.Microsecond
		h := int64(d / time.Hour)
		m := int64(d/time.Minute) % 60
		s := int64(d/time.Second) % 60
		frac := us % 1e6
		str := fmt.Sprintf("%s%02d:%02d:%02d", sign, h, m, s)
		if frac != 0 {
			str += strings.TrimRight(fmt.Sprintf(".%06d", frac), "0")
		}
		parts = append(parts, str)
	}
	return strings.Join(parts, " ")
}

func plural(n int64, unit string) string {
	if n == 1 || n == -1 {
		return fmt.Sprintf("%d %s", n, unit)
	}
	return fmt.Sprintf("%d %ss", n, unit)
}

// formatBlob shows printable ASCII as is and other bytes as \xNN, as
// DuckDB does.
func formatBlob(b []byte) string {
	var sb strings.Builder
	for _, c := range b {
		if c >= 0x20 && c < 0x7f && c != '\\' {
			sb.WriteByte(c)
		} else {
			fmt.Fprintf(&sb, `\x%02X`, c)
		}
	}
	return sb.String()
}
