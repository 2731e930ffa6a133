package schema

import (
	"sync"

	"github.com/apache/arrow/go/v17/arrow"
)

// pipeline hands record batches to the sink on a goroutine of its own, so
// that an ingester parses the next batch while DuckDB loads the previous
// one. At most pipelineDepth batches wait, which bounds memory.
type pipeline struct {
	sink  Sink
	ch    chan item
	done  chan struct{}
	mu    sync.Mutex
	first error
}

type item struct {
	table string
	rec   arrow.Record
}

const pipelineDepth = 2

func newPipeline(sink Sink) *pipeline {
	p := &pipeline{sink: sink, ch: make(chan item, pipelineDepth), done: make(chan struct{})}
	go p.run()
	return p
}

func (p *pipeline) run() {
	defer close(p.done)
	for it := range p.ch {
		if p.err() == nil {
			if err := p.sink.Put(it.table, it.rec); err != nil {
				p.setErr(err)
			}
		}
		it.rec.Release()
	}
}

func (p *pipeline) setErr(err error) {
	p.mu.Lock()
	if p.first == nil {
		p.first = err
	}
	p.mu.Unlock()
}

func (p *pipeline) err() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.first
}

// put queues rec (the pipeline releases it) and returns the first error
// the sink reported so far.
func (p *pipeline) put(table string, rec arrow.Record) error {
	if err := p.err(); err != nil {
		rec.Release()
		return err
	}
	p.ch <- item{table, rec}
	return p.err()
}

// close waits for the queued batches. With cause non-nil (an abort) the
// batches still queued are dropped, not loaded.
func (p *pipeline) close(cause error) error {
	if cause != nil {
		p.setErr(cause)
	}
	close(p.ch)
	<-p.done
	return p.err()
}
