package dtracefmt_test

import (
	"bytes"
	"encoding/binary"
	"strings"
	"testing"

	"github.com/traceduck/traceduck/queries/dtracefmt"
)

// FuzzWrite builds a histogram of any kind from the fuzzer's numbers
// (parameters, then (value, weight) pairs bucketed by Spec.Bucket) and
// prints it: valid parameters never fail, invalid ones are refused, and
// every row has the label, a 40-column bar or half bars and the count.
func FuzzWrite(f *testing.F) {
	seed := func(kind byte, nums ...int64) []byte {
		b := []byte{kind}
		for _, n := range nums {
			b = binary.LittleEndian.AppendUint64(b, uint64(n))
		}
		return b
	}
	f.Add(seed(0, 0, 0, 0, 0, 5, 1, -5, 2, 0, 3))
	f.Add(seed(1, 0, 100, 10, 0, 57, 1, -3, 1, 100, 4))
	f.Add(seed(2, 10, 0, 6, 20, 37, 1, 1e6, -2))
	f.Add(seed(3, -50, 25, 8, 0, 57, 1, 1<<40, 1))
	f.Add(seed(4, 0, 10, 50, 0, 5, 1, 60, 1))
	f.Add(seed(2, 2, 0, 61, 2, 1<<62, 1, -1, 1))
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) < 1+4*8 {
			return
		}
		num := func(i int) int64 { return int64(binary.LittleEndian.Uint64(data[1+8*i:])) }
		spec := dtracefmt.Spec{Kind: dtracefmt.Kind(data[0] % 5)}
		switch spec.Kind {
		case dtracefmt.LQuantize:
			spec.Lower, spec.Upper, spec.Step = num(0), num(1), num(2)
		case dtracefmt.LLQuantize:
			spec.Factor, spec.Low, spec.High, spec.NSteps = num(0), num(1), num(2), num(3)
		case dtracefmt.Linear:
			spec.Lower, spec.Step, spec.Levels = num(0), num(1), num(2)%100000
		case dtracefmt.Edges:
			spec.Edges = []int64{num(0), num(1), num(2)}
		}
		if spec.Kind == dtracefmt.LLQuantize && (spec.High-spec.Low+1)*spec.NSteps > 1e5 {
			return // up to millions of rows, each one checked below: too slow for a fuzz run
		}
		counts := map[int64]int64{}
		if spec.Check() == nil {
			for i := 4; 1+8*(i+2) <= len(data) && i < 40; i += 2 {
				counts[spec.Bucket(num(i))] += num(i+1) % (1 << 40)
			}
		}
		var out bytes.Buffer
		err := dtracefmt.Write(&out, spec, []dtracefmt.Hist{{Key: dtracefmt.StringKey("k"), Counts: counts}})
		if (err == nil) != (spec.Check() == nil) {
			t.Fatalf("%s: Write says %v, Check says %v", spec, err, spec.Check())
		}
		if err != nil {
			return
		}
		lines := strings.Split(out.String(), "\n")
		for _, l := range lines[2 : len(lines)-2] {
			if len(l) < 16+1+41+1+9 || strings.Count(l, "|") != 1 || strings.Count(l, "@") > 40 {
				t.Fatalf("%s: bad row %q in\n%s", spec, l, out.String())
			}
		}
	})
}
