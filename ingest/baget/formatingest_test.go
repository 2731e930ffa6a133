package baget_test

import (
	"fmt"
	"testing"

	"github.com/traceduck/traceduck/internal/tracegen"
)

// TestFormatsInEvents: a generated log read through the bundled
// description (whose fields have formats, docs 2.11) keeps every number
// queryable under its name and adds the display string under NAME#:
// each thread's THREAD_CREATE opts are the generator's option bits of
// that thread (bagetThreadOpts: even threads FPU, every third
// STACK_CHECK, thread 0 SUPERVISOR) as names; each THREAD_BLOCK reason
// and each message's msg_kind name the number beside them, and a
// message's msg_kind names the member of its head union that args show.
func TestFormatsInEvents(t *testing.T) {
	db := openDB(t)
	res, _ := ingestGenerated(t, db, tracegen.BagetConfig{Events: 3000, Seed: 4, ABI: "le32", Threads: 7})
	run := res.RunID
	opts := map[int]string{0: "FPU|STACK_CHECK|SUPERVISOR", 1: "0", 2: "FPU", 3: "STACK_CHECK", 4: "FPU", 5: "0", 6: "FPU|STACK_CHECK"}
	var want []string
	for i := 0; i < 7; i++ {
		want = append(want, fmt.Sprintf("thr%d | %s", i, opts[i]))
	}
	compare(t, "THREAD_CREATE opts#", rows(t, db.SQL(), `SELECT args->>'name', args->>'opts#' FROM events
		WHERE run_id = ? AND event = 'THREAD_CREATE'`, run), want)
	// The numbers stay numbers: threads using the FPU by bit 0.
	if got := query(t, db.SQL(), `SELECT count(*) FROM events WHERE run_id = ? AND event = 'THREAD_CREATE'
		AND TRY_CAST(args->>'opts' AS INTEGER) & 1 = 1`, run); got != "4\n" {
		t.Errorf("threads with opts bit 0: %s, want 4", got)
	}
	compare(t, "THREAD_BLOCK reason", rows(t, db.SQL(), `SELECT DISTINCT args->>'reason', args->>'reason#' FROM events
		WHERE run_id = ? AND event = 'THREAD_BLOCK'`, run), []string{"1 | SLEEP", "2 | SEM", "3 | MUTEX"})
	compare(t, "msg_kind", rows(t, db.SQL(), `SELECT DISTINCT event, args->>'msg_kind', args->>'msg_kind#',
		json_exists(args, '$."head.' || (args->>'msg_kind#') || '"') OR json_exists(args, '$."head.' || (args->>'msg_kind#') || '[0]"')
		FROM events WHERE run_id = ? AND event LIKE 'MQ_%' AND event <> 'MQ_CREATE'`, run), []string{
		"MQ_RECEIVE | 0 | raw | true", "MQ_RECEIVE | 1 | code | true", "MQ_RECEIVE | 2 | text | true", "MQ_RECEIVE | 3 | value | true",
		"MQ_SEND | 0 | raw | true", "MQ_SEND | 1 | code | true", "MQ_SEND | 2 | text | true", "MQ_SEND | 3 | value | true"})
	// A thread address in hex beside its number.
	if got := query(t, db.SQL(), `SELECT count(*) FROM events WHERE run_id = ? AND event = 'THREAD_SWITCH'
		AND (args->>'next#') <> printf('0x%x', TRY_CAST(args->>'next' AS UBIGINT))`, run); got != "0\n" {
		t.Errorf("THREAD_SWITCH next# not next in hex: %s", got)
	}
}
