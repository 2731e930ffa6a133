package tlv

import (
	"bytes"
	"errors"
	"testing"

	"github.com/traceduck/traceduck/internal/dbtest"
)

// FuzzConfigFiles: a conversion rule file (.cnv), a resource header file
// (.resh), a resource file (.res) or a statistics generation rule file
// (.sgr) of arbitrary bytes is parsed or
// refused with a *ConfigError that names the file and, when it has one,
// a line and column inside it; never a panic or a hang (a rule's pattern
// is compiled with regexp2, bounded by its timeout when it runs, not here).
func FuzzConfigFiles(f *testing.F) {
	dbtest.AddSeeds(f, 16<<10, "bundled/*.cnv", "bundled/*.resh", "testdata/config/*.res", "testdata/config/*.cnv",
		"testdata/config/*.resh", "testdata/config/rules/*", "testdata/fuzzrules/*")
	f.Add([]byte(`{"s": {"(abc": "x"}}`))
	f.Add([]byte("{\"s\": {\"x\": {\"c\": [\"a\", {\"d\": \"e\"}]}}}"))
	f.Add([]byte(`{"n": {"Mode": "Basic", "BasicRule": {"Method": "Count", "When": {"ResourceType": ["Task"], "AttributeName": "state", "AttributeValue": "RUNNING"}}}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		lines := int64(bytes.Count(data, []byte("\n")) + 1)
		check := func(what string, err error) {
			if err == nil {
				return
			}
			var ce *ConfigError
			if !errors.As(err, &ce) {
				t.Fatalf("%s: %T is not a *ConfigError: %v", what, err, err)
			}
			if ce.Pos.File != what || int64(ce.Pos.Line) > lines || ce.Pos.Line < 0 || (ce.Pos.Line > 0 && ce.Pos.Col < 1) {
				t.Fatalf("%s: error at %s:%d:%d of %d lines: %v", what, ce.Pos.File, ce.Pos.Line, ce.Pos.Col, lines, err)
			}
		}
		_, err := ParseRules("f.cnv", data)
		check("f.cnv", err)
		_, err = ParseHeaders("f.resh", data)
		check("f.resh", err)
		_, err = ParseResourceFile("f.res", data)
		check("f.res", err)
		_, err = ReadSGR("f.sgr", data)
		check("f.sgr", err)
	})
}
