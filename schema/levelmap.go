package schema

// The view state_level_map (queries/state_aggregation.sql) follows every
// state named in state_levels up its kind's levels. Its SQL builds one
// MAP per kind and looks each step up in it, and a DuckDB MAP lookup scans
// the map: with a state per thread at the CPU's level 0 (7,000 on a
// 1M-event ftrace run), 0.6-0.9 s of CPU for every view that reads it
// (cpu_intervals, hence cpu_load and cpu_utilization, the report, the
// Chrome export). The run writer knows the final level map when the run
// ends (finalLevels) and writes the view's rows, TableStateLevelPaths; the
// SQL stays as state_level_map_reference, for the runs without rows.

// putLevelPaths writes the rows of state_level_map: per kind with levels,
// each state named in state_levels (as a level-0 state) and what it is at
// each level 0..depth.
func (w *RunWriter) putLevelPaths() error {
	if len(w.levels) == 0 {
		return nil
	}
	f := w.finalLevels()
	// the kinds, and their states, in the order first declared
	var kinds []string
	states := map[string][]string{}
	seen := map[string]map[string]bool{}
	for _, k := range w.levels {
		kn := w.syms.str(k.kind)
		if f.depth[kn] == 0 {
			continue
		}
		if seen[kn] == nil {
			seen[kn] = map[string]bool{}
			kinds = append(kinds, kn)
		}
		if s := repaired(k.state); !seen[kn][s] {
			seen[kn][s] = true
			states[kn] = append(states[kn], s)
		}
	}
	if len(kinds) == 0 {
		return nil
	}
	b := newBatchCounting(w.mem, TableStateLevelPaths, w.syms, &w.badUTF8)
	defer b.release()
	for _, kn := range kinds {
		kind := w.syms.intern(kn)
		depth := f.depth[kn]
		all, per := states[kn], max(w.batchRows/int(depth+1), 1)
		for start := 0; start < len(all); start += per {
			batch := all[start:min(start+per, len(all))]
			b.reserve(len(batch) * int(depth+1))
			for _, atomic := range batch {
				s := lvName{atomic, true}
				for l := int32(0); l <= depth; l++ {
					if l > 0 {
						s = f.at(kn, l-1, s)
					}
					b.i32(0).Append(w.info.RunID)
					b.dict(1).put(kind)
					b.str(2).add(atomic)
					b.i32(3).Append(l)
					b.str(4).add(s.s)
					b.rows++
				}
			}
			if err := w.out.put(TableStateLevelPaths, b.record()); err != nil {
				return err
			}
		}
	}
	return nil
}
