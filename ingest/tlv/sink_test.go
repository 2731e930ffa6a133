package tlv

import (
	"encoding/json"
	"testing"
)

// FuzzAppendJSONString: appendJSONString writes what json.Marshal does.
func FuzzAppendJSONString(f *testing.F) {
	for _, s := range []string{"", "semid=1.", `a"b`, `a\b`, "<&>", "x\ny", "\x7f", "é", "\xff", "\u2028"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want, _ := json.Marshal(s)
		if got := appendJSONString([]byte("x"), s); string(got) != "x"+string(want) {
			t.Fatalf("%q: %s, json.Marshal %s", s, got[1:], want)
		}
	})
}
