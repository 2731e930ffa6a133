package schema

import (
	"database/sql"
	"fmt"
	"math"
	"strings"
	"unicode/utf8"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
)

// MaxName bounds a name: an object's name and every string kept as a
// symbol (class, event, state, kind, ...), whatever the format. A longer
// one is cut to its first MaxName bytes (at a character boundary; two
// names that agree that far become one) and the run's diagnostics count
// the names cut. Why a bound, and why 32 KiB: a name is held in memory
// for the whole ingest, and DuckDB 1.1 keeps a transaction's strings
// longer than about 50 KiB in memory until COMMIT, where they must all fit
// under the memory limit of an ingest (see ingestMemoryLimit). Measured:
// 64 KiB names made the COMMIT fail from about 120 MB of them (1900), and
// where the table has a primary key (symbols, runs) DuckDB then aborts the
// process while it rolls back (UndoBuffer::Rollback, std::terminate); 32
// KiB names committed at every count tried, up to 30,000 (1 GB).
const MaxName = 32 << 10

// nameLen is how much of a name is kept: all of it when it is at most
// MaxName bytes once repaired (a run of bytes that are not UTF-8 becomes
// U+FFFD, 3 bytes), else the longest start of it that is, without
// splitting a character. name[:nameLen(name)] shares the name's memory:
// a lookup uses it as it is, what is kept is a copy (else the cut would
// keep all of it in memory).
func nameLen[T string | []byte](name T) int {
	if len(name) <= MaxName/utf8.UTFMax {
		return len(name) // even repaired, within the bound
	}
	size, bad := 0, false
	for i := 0; i < len(name); {
		var r rune
		var w int
		switch v := any(name).(type) {
		case string:
			r, w = utf8.DecodeRuneInString(v[i:])
		case []byte:
			r, w = utf8.DecodeRune(v[i:])
		}
		add := w
		if r == utf8.RuneError && w == 1 {
			add = 0
			if !bad {
				add = len("\uFFFD")
			}
			bad = true
		} else {
			bad = false
		}
		if size+add > MaxName {
			return i
		}
		size += add
		i += w
	}
	return len(name)
}

// symtab interns strings as Syms. Lookups by []byte do not allocate.
// A string that is not UTF-8 is kept under its own bytes as the key and
// stored repaired (U+FFFD), as strCol does for plain columns. A name
// longer than MaxName is kept cut.
type symtab struct {
	ids   map[string]Sym
	names []string
	bad   int64
	cut   int64 // symbols made of a cut name
}

func newSymtab() *symtab { return &symtab{ids: make(map[string]Sym)} }

func (t *symtab) intern(s string) Sym {
	if id, ok := t.ids[s]; ok {
		return id
	}
	if n := nameLen(s); n < len(s) {
		if id, ok := t.ids[s[:n]]; ok {
			return id
		}
		t.cut++
		return t.add(strings.Clone(s[:n]))
	}
	return t.add(s)
}

// add makes a new symbol of s (not in the table, at most MaxName bytes).
func (t *symtab) add(s string) Sym {
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
	if n := nameLen(b); n < len(b) {
		if id, ok := t.ids[string(b[:n])]; ok {
			return id
		}
		t.cut++
		b = b[:n]
	}
	return t.add(string(b))
}

func (t *symtab) str(s Sym) string {
	if s < 0 || int(s) >= len(t.names) {
		return ""
	}
	return t.names[s]
}

// runSymbols maps the symbols of one run, as its writer numbers them
// (dense from 0, in the order of first use), to the ids of the database's
// symbols table. Only the names the run uses are looked up, a batch of
// them at a time, when the writer sends them: what an ingest holds of
// symbols follows its own names, not all the names of the database (which
// an ingest used to read whole into Go before its first event).
type runSymbols struct {
	ids  []int32 // run symbol -> database symbol
	next int64   // the database's next free id; -1 until read
	// names are the database's names and the run's, by name, when the
	// database had at most maxCached at the run's first symbols (see
	// putSymbols); nil when they are looked up in SQL. pending are the
	// run's new names not yet inserted.
	names     map[string]int32
	pending   []newSymbol
	maxCached int
	count     int64 // the database's names when next was read
	ready     bool  // names read or the temporary table made (putSymbols)
	temp      bool  // the temporary table of new names is made
	// late: the run's keys of lateSymbol columns -> the database symbol
	// each was given (a fresh id, its name written at the end, see
	// putLateSymbols)
	late []int32
}

type newSymbol struct {
	id   int32
	name string
}

// maxCachedSymbols bounds the names a run's sink keeps in Go (a few MB;
// a variable for tests); pendingSymbols is how many new names it inserts
// at once.
var maxCachedSymbols = 1 << 16

const pendingSymbols = 1 << 14

// newSymbolsTable is the temporary table that holds a batch of a run's
// new symbols while they are looked up.
const newSymbolsTable = "traceduck_new_symbols"

// putSymbols takes a batch of a run's symbols (its next ids, in order):
// the names the database holds keep their ids, the others get the next
// free ones (in the run's order, so that a fresh database numbers them as
// the run does) and are inserted.
//
// A database of at most maxCachedSymbols names (almost every one: a run
// has a few dozen names, and a few thousand where a signal's values are
// states) is read whole into Go at the run's first symbols, the run's
// names are looked up there, and its new names are inserted in one
// statement at the end of the run (flushSymbols) or once pendingSymbols
// have gathered. The writer sends the new symbols before each batch that
// uses them: on the 10M-event BTF benchmark, whose signal values bring new
// names into almost every batch, 91 lookups of 8 statements each took 0.9
// s of the load's thread (load average 10) before.
//
// In a larger database (or once the run's own names pass the bound) the
// database's names are read once per batch, by a hash join built on the
// batch's names (DuckDB scans the name column; nothing of it comes into
// Go): measured, 0.1 to 0.3 s per million names in the database on a
// loaded 2-core machine.
func (s *duckSink) putSymbols(rec arrow.Record) error {
	if rec.NumRows() == 0 {
		return nil
	}
	fail := func(err error) error { return fmt.Errorf("load %s: %w", TableSymbols, err) }
	if err := s.readNextSymbol(); err != nil {
		return fail(err)
	}
	if !s.syms.ready {
		if s.syms.count <= int64(s.syms.maxCached) {
			if err := s.readSymbols(); err != nil {
				return fail(err)
			}
		} else if err := s.useSymbolsTable(); err != nil {
			return fail(err)
		}
		s.syms.ready = true
	}
	ids := rec.Column(0).(*array.Int32)
	first := int64(len(s.syms.ids))
	if ids.NullN() > 0 || int64(ids.Value(0)) != first || int64(ids.Value(ids.Len()-1)) != first+rec.NumRows()-1 {
		return fail(fmt.Errorf("symbols %d to %d sent after %d symbols", ids.Value(0), ids.Value(ids.Len()-1), first))
	}
	if s.syms.names != nil {
		names := rec.Column(1).(*array.String)
		for i := 0; i < names.Len(); i++ {
			name := names.Value(i)
			id, ok := s.syms.names[name]
			if !ok {
				// a name that comes twice (two strings that are not UTF-8
				// and read the same once repaired) is inserted once, under
				// its first symbol
				id = int32(s.syms.next)
				s.syms.next++
				name = strings.Clone(name) // the batch's buffer is not ours
				s.syms.names[name] = id
				s.syms.pending = append(s.syms.pending, newSymbol{id, name})
			}
			s.syms.ids = append(s.syms.ids, id)
		}
		if len(s.syms.pending) >= pendingSymbols || len(s.syms.names) > s.syms.maxCached {
			if err := s.flushSymbols(); err != nil {
				return fail(err)
			}
		}
		if len(s.syms.names) > s.syms.maxCached {
			// the run's own names passed the bound: look the next ones up
			// in the database
			s.syms.names = nil
			if err := s.useSymbolsTable(); err != nil {
				return fail(err)
			}
		}
		return nil
	}
	// The batch goes in as (sym, name); id is NULL until found.
	withID := withNullColumn(rec)
	defer withID.Release()
	if err := s.insert("temp."+newSymbolsTable, withID); err != nil {
		return fail(err)
	}
	t := "temp." + newSymbolsTable
	steps := []struct {
		sql  string
		args []any
	}{
		// the names the database holds (one scan of its names)
		{`UPDATE ` + t + ` n SET id = f.id FROM (SELECT n.name, min(s.sym) AS id FROM ` + t + ` n
			JOIN ` + TableSymbols + ` s ON s.name = n.name GROUP BY n.name) f WHERE n.name = f.name`, nil},
		// the others, numbered in the run's order; a name that comes twice
		// (two strings that are not UTF-8 and read the same once repaired)
		// is inserted once, under its first symbol
		{`INSERT INTO ` + TableSymbols + `
			SELECT CAST(? + row_number() OVER (ORDER BY sym) - 1 AS INTEGER), name
			FROM (SELECT min(sym) AS sym, name FROM ` + t + ` WHERE id IS NULL GROUP BY name)`, []any{s.syms.next}},
		// and their ids (the filter on sym skips all but the rows just added)
		{`UPDATE ` + t + ` n SET id = s.sym FROM ` + TableSymbols + ` s
			WHERE n.id IS NULL AND s.sym >= ? AND s.name = n.name`, []any{s.syms.next}},
	}
	for _, st := range steps {
		if _, err := s.conn.ExecContext(s.ctx, st.sql, st.args...); err != nil {
			return fail(err)
		}
	}
	rows, err := s.conn.QueryContext(s.ctx, "SELECT sym, id FROM "+t+" ORDER BY sym")
	if err != nil {
		return fail(err)
	}
	defer rows.Close()
	for rows.Next() {
		var local int64
		var id sql.NullInt32
		if err := rows.Scan(&local, &id); err != nil {
			return fail(err)
		}
		if local != int64(len(s.syms.ids)) || !id.Valid {
			return fail(fmt.Errorf("symbol %d not found once inserted (after %d)", local, len(s.syms.ids)))
		}
		s.syms.ids = append(s.syms.ids, id.Int32)
		s.syms.next = max(s.syms.next, int64(id.Int32)+1)
	}
	if err := rows.Err(); err != nil {
		return fail(err)
	}
	if got := int64(len(s.syms.ids)) - first; got != rec.NumRows() {
		return fail(fmt.Errorf("%d of %d symbols found", got, rec.NumRows()))
	}
	if _, err := s.conn.ExecContext(s.ctx, "DELETE FROM "+t); err != nil {
		return fail(err)
	}
	return nil
}

// readSymbols reads the database's names into the run's map.
func (s *duckSink) readSymbols() error {
	rows, err := s.conn.QueryContext(s.ctx, "SELECT sym, name FROM "+TableSymbols+" ORDER BY sym")
	if err != nil {
		return err
	}
	defer rows.Close()
	s.syms.names = make(map[string]int32)
	for rows.Next() {
		var id int32
		var name sql.NullString // a late symbol's name may be NULL
		if err := rows.Scan(&id, &name); err != nil {
			return err
		}
		if _, ok := s.syms.names[name.String]; name.Valid && !ok {
			s.syms.names[name.String] = id // the first of a name's ids, as min(sym)
		}
	}
	return rows.Err()
}

// useSymbolsTable makes the temporary table the names are looked up
// through in SQL.
func (s *duckSink) useSymbolsTable() error {
	if _, err := s.conn.ExecContext(s.ctx, "CREATE OR REPLACE TEMP TABLE "+newSymbolsTable+" (sym INTEGER, name VARCHAR, id INTEGER)"); err != nil {
		return err
	}
	s.syms.temp = true
	return nil
}

// flushSymbols inserts the run's new names that are not yet in the
// database (the names looked up in Go).
func (s *duckSink) flushSymbols() error {
	if len(s.syms.pending) == 0 {
		return nil
	}
	b := newBatch(memory.DefaultAllocator, TableSymbols, nil)
	defer b.release()
	b.reserve(len(s.syms.pending))
	for _, n := range s.syms.pending {
		b.i32(0).Append(n.id)
		b.str(1).add(n.name)
		b.rows++
	}
	rec := b.record()
	defer rec.Release()
	if err := s.insert(TableSymbols, rec); err != nil {
		return fmt.Errorf("load %s: %w", TableSymbols, err)
	}
	s.syms.pending = s.syms.pending[:0]
	return nil
}

// readNextSymbol reads the database's next free symbol id and how many
// names it holds, once per run.
func (s *duckSink) readNextSymbol() error {
	if s.syms.next >= 0 {
		return nil
	}
	var next, count int64
	if err := s.conn.QueryRowContext(s.ctx, "SELECT coalesce(max(sym) + 1, 0), count(*) FROM "+TableSymbols).Scan(&next, &count); err != nil {
		return err
	}
	s.syms.next, s.syms.count = next, count
	return nil
}

// reserveLate gives the run's late keys up to key a database symbol id
// each, the next free ones.
func (s *duckSink) reserveLate(key int32) error {
	if err := s.readNextSymbol(); err != nil {
		return err
	}
	for int(key) >= len(s.syms.late) {
		if s.syms.next > math.MaxInt32 {
			return fmt.Errorf("more than %d symbols", math.MaxInt32)
		}
		s.syms.late = append(s.syms.late, int32(s.syms.next))
		s.syms.next++
	}
	return nil
}

// putLateSymbols writes the names of the run's late keys (key, name) into
// symbols, each under the id its key was given; a key no batch used has
// none, and is left out.
func (s *duckSink) putLateSymbols(rec arrow.Record) error {
	keys := rec.Column(0).(*array.Int32)
	names := rec.Column(1).(*array.String)
	b := newBatch(memory.DefaultAllocator, TableSymbols, nil)
	defer b.release()
	for i := 0; i < keys.Len(); i++ {
		k := keys.Value(i)
		if k < 0 || int(k) >= len(s.syms.late) {
			continue
		}
		b.i32(0).Append(s.syms.late[k])
		if names.IsNull(i) {
			b.str(1).AppendNull()
		} else {
			b.str(1).add(names.Value(i))
		}
		b.rows++
	}
	if b.rows == 0 {
		return nil
	}
	out := b.record()
	defer out.Release()
	return s.insert(TableSymbols, out)
}

// withNullColumn returns rec with one more column, an Int32 of NULLs.
func withNullColumn(rec arrow.Record) arrow.Record {
	b := array.NewInt32Builder(memory.DefaultAllocator)
	defer b.Release()
	b.AppendNulls(int(rec.NumRows()))
	col := b.NewArray()
	defer col.Release()
	fields := append(rec.Schema().Fields(), arrow.Field{Name: "id", Type: arrow.PrimitiveTypes.Int32, Nullable: true})
	return array.NewRecord(arrow.NewSchema(fields, nil), append(rec.Columns(), col), rec.NumRows())
}

// translate turns the run's symbol ids of a batch of events or
// state_intervals into the database's, in place (the batch is the sink's
// until Put returns).
func (s *duckSink) translate(table string, rec arrow.Record) error {
	m := &s.syms
	for i, c := range lookupTable(table).storedColumns() {
		if !c.isSymbol() {
			continue
		}
		col := rec.Column(i).(*array.Int32)
		vals := col.Int32Values()
		if c.isLateSymbol() {
			for j, v := range vals {
				if col.IsNull(j) {
					continue
				}
				if v < 0 {
					return fmt.Errorf("%s is key %d", c.storedName(), v)
				}
				if int(v) >= len(m.late) {
					if err := s.reserveLate(v); err != nil {
						return err
					}
				}
				vals[j] = m.late[v]
			}
			continue
		}
		for j, v := range vals {
			if v < 0 || int(v) >= len(m.ids) {
				if col.IsNull(j) {
					continue
				}
				return fmt.Errorf("%s is symbol %d, of %d sent", c.storedName(), v, len(m.ids))
			}
			vals[j] = m.ids[v]
		}
	}
	return nil
}
