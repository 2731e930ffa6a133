package schema

// Aggregation is one row of the aggregations table as an ingester hands
// it over. The writer copies what it needs; the caller may reuse the
// struct and the byte slices it points to.
type Aggregation struct {
	Agg   Sym    // "@name" (bpftrace), "#N" (DTrace)
	Title Sym    // NoSym for NULL
	Key   []byte // '' for no key; nil is NULL
	Keys  []byte // JSON list of strings; nil is NULL
	Value int64
	Line  int64
}

// Histogram is what the buckets of one printed distribution share.
type Histogram struct {
	Agg   Sym
	Title Sym // NoSym for NULL
	Key   []byte
	Keys  []byte // JSON list of strings; nil is NULL
	Func  Sym    // NoSym when not known
}

// Bucket is one row of a distribution.
type Bucket struct {
	Label []byte
	Lo    int64 // with HasLo; without, the bucket has no lower bound (NULL)
	Hi    int64 // exclusive, with HasHi; without, no upper bound (NULL)
	HasLo bool
	HasHi bool
	Count int64
	Line  int64
}

// Aggregation appends one row to aggregations. The error is that of a
// batch that could not be loaded; the ingest must stop then.
func (w *RunWriter) Aggregation(a *Aggregation) error {
	if w.aggs == nil {
		w.aggs = newBatchCounting(w.mem, TableAggregations, w.syms, &w.badUTF8)
		w.aggs.reserve(min(w.batchRows, 1024))
	}
	b := w.aggs
	b.i32(0).Append(w.info.RunID)
	b.dict(1).put(a.Agg)
	b.dict(2).put(a.Title)
	b.str(3).putBytes(a.Key)
	b.str(4).putBytes(a.Keys)
	b.i64(5).Append(a.Value)
	b.i64(6).Append(a.Line)
	b.rows++
	if b.rows >= w.batchRows {
		return w.flushTable(TableAggregations, b)
	}
	return nil
}

// Histogram appends the buckets of one distribution to histograms, in
// the order given.
func (w *RunWriter) Histogram(h *Histogram, buckets []Bucket) error {
	if w.hists == nil {
		w.hists = newBatchCounting(w.mem, TableHistograms, w.syms, &w.badUTF8)
		w.hists.reserve(min(w.batchRows, 1024))
	}
	b := w.hists
	for i := range buckets {
		k := &buckets[i]
		b.i32(0).Append(w.info.RunID)
		b.dict(1).put(h.Agg)
		b.dict(2).put(h.Title)
		b.str(3).putBytes(h.Key)
		b.str(4).putBytes(h.Keys)
		b.dict(5).put(h.Func)
		b.str(6).putBytes(k.Label)
		b.i64(7).put(k.Lo, !k.HasLo)
		b.i64(8).put(k.Hi, !k.HasHi)
		b.i64(9).Append(k.Count)
		b.i64(10).Append(k.Line)
		b.rows++
		if b.rows >= w.batchRows {
			if err := w.flushTable(TableHistograms, b); err != nil {
				return err
			}
		}
	}
	return nil
}

// flushTable sends what a lazily made batch holds.
func (w *RunWriter) flushTable(table string, b *batch) error {
	if b == nil || b.rows == 0 {
		return w.out.err()
	}
	rec := b.record()
	b.reserve(min(w.batchRows, 1024))
	return w.out.put(table, rec)
}

// flushAggregations sends the last batches of both tables (Finish).
func (w *RunWriter) flushAggregations() error {
	if err := w.flushTable(TableAggregations, w.aggs); err != nil {
		return err
	}
	return w.flushTable(TableHistograms, w.hists)
}

func (w *RunWriter) releaseAggregations() {
	for _, b := range []*batch{w.aggs, w.hists} {
		if b != nil {
			b.release()
		}
	}
	w.aggs, w.hists = nil, nil
}
