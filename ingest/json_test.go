package ingest

import (
	"encoding/json"
	"testing"
	"unicode/utf8"
)

func FuzzAppendJSONString(f *testing.F) {
	for _, s := range []string{"", "a\"b\\c", "\x00\x1f\x7f\n\t", "\xff\xfe", "日本\u2028"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, s []byte) {
		out := AppendJSONString(nil, s)
		var back string
		if err := json.Unmarshal(out, &back); err != nil {
			t.Fatalf("%q gives invalid JSON %s: %v", s, out, err)
		}
		if utf8.Valid(s) && back != string(s) {
			t.Fatalf("%q reads back as %q", s, back)
		}
	})
}
