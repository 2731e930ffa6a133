package dbtest

import "runtime"

// Allocated runs fn and returns the bytes the Go heap allocated meanwhile
// (runtime.MemStats.TotalAlloc): an upper bound of the memory fn took,
// for tests that an input claiming gigabytes is refused before anything
// is allocated from its claim. Other goroutines' allocations count too,
// so bounds are set with room.
func Allocated(fn func()) uint64 {
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	fn()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}
