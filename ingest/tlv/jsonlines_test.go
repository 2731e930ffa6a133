package tlv

import (
	"bufio"
	"encoding/json"
	"io"
	"strings"
	"testing"
	"testing/iotest"
	"unicode/utf8"
)

// decodeLines reads a JSON list through jsonLines, a byte at a time too
// (every split of the input and of what is read must give the same).
func decodeLines(t *testing.T, in string) (string, error) {
	t.Helper()
	text, err := io.ReadAll(newJSONLines(bufio.NewReader(strings.NewReader(in)), "x.tlv!a.log"))
	slow, slowErr := io.ReadAll(iotest.OneByteReader(newJSONLines(bufio.NewReaderSize(iotest.OneByteReader(strings.NewReader(in)), 16), "x.tlv!a.log")))
	if string(slow) != string(text) || (err == nil) != (slowErr == nil) || err != nil && err.Error() != slowErr.Error() {
		t.Errorf("%q: a byte at a time %q %v, at once %q %v", in, slow, slowErr, text, err)
	}
	return string(text), err
}

// TestJSONLines: the log of an archive decodes as encoding/json decodes a
// list of strings, each string then a line end.
func TestJSONLines(t *testing.T) {
	for _, in := range []string{
		`[]`,
		" \r\n[ ]\n",
		`["[1]TASK1.state=RUNNING"]`,
		"[\n \"[1]A.b=c\",\n \"[2]A.b=d\"\n]\n",
		`["tab\there", "quote \" backslash \\ slash \/", "\b\f\r", "two\nlines"]`,
		`["\u00e9\u4E2D", "😀 \ud83d\ude00", "lone \ud83d then \ude00 and \ud83d\u0041"]`,
		`["é, 中", ""]`,
	} {
		var want []string
		if err := json.Unmarshal([]byte(in), &want); err != nil {
			t.Fatalf("%q: %v", in, err)
		}
		text, err := decodeLines(t, in)
		if w := joinLines(want); err != nil || text != w {
			t.Errorf("%q:\n got %q %v\nwant %q", in, text, err, w)
		}
	}
}

func joinLines(lines []string) string {
	var b strings.Builder
	for _, l := range lines {
		b.WriteString(l)
		b.WriteByte('\n')
	}
	return b.String()
}

// TestJSONLinesErrors: a list that is not one is an error at its line.
func TestJSONLinesErrors(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{`{}`, `x.tlv!a.log:1: expected "[" (the JSON list of the log's lines), found "{"`},
		{"[\n\"a\",\n\n", `x.tlv!a.log:4: expected a string (a line of the log) after ",", found the end of the entry`},
		{"[\n1]", `x.tlv!a.log:2: expected a string (a line of the log) or "]", found "1"`},
		{`["a" "b"]`, `x.tlv!a.log:1: expected "," or "]" after a line of the log, found "\""`},
		{`["a",]`, `x.tlv!a.log:1: expected a string (a line of the log) after ",", found "]"`},
		{`["a"`, `x.tlv!a.log:1: expected "," or "]" after a line of the log, found the end of the entry`},
		{`["abc`, `x.tlv!a.log:1: expected the '"' that ends a line of the log, found the end of the entry`},
		{"[\"a\nb\"]", `x.tlv!a.log:1: expected a character of a string, found "\n" (a control character, which JSON escapes)`},
		{`["a\x"]`, `x.tlv!a.log:1: expected an escape (\", \\, \/, \b, \f, \n, \r, \t or \uXXXX), found "\\x"`},
		{`["a\u12g4"]`, `x.tlv!a.log:1: expected 4 hex digits after "\u", found "12g4"`},
		{`["a\u12`, `x.tlv!a.log:1: expected 4 hex digits after "\u", found "12"`},
		{`["a\`, `x.tlv!a.log:1: expected an escape after "\", found the end of the entry`},
		{"[\"a\"]\n[\"b\"]", `x.tlv!a.log:2: expected the end of the log after its JSON list's "]", found "["`},
	} {
		text, err := decodeLines(t, c.in)
		if err == nil || err.Error() != c.want {
			t.Errorf("%q: %q\n got %v\nwant %s", c.in, text, err, c.want)
		}
	}
}

// FuzzJSONLines: whatever encoding/json reads as a list of strings (of
// valid UTF-8: encoding/json replaces what is not, jsonLines passes it
// on to the line reader, which does), jsonLines reads the same, and what
// it refuses encoding/json refuses.
func FuzzJSONLines(f *testing.F) {
	for _, s := range []string{`[]`, `["a","b"]`, `["\u00e9\ud83d\ude00\ud83d"]`, `["a\n"]`, `[1]`, `["a" ]x`, `  [ "a" , "" ] `} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		if !utf8.ValidString(in) || !archiveIsJSONList([]byte(in)) {
			return
		}
		var want []string
		jsonErr := json.Unmarshal([]byte(in), &want)
		text, err := decodeLines(t, in)
		if (jsonErr == nil) != (err == nil) {
			t.Fatalf("%q: encoding/json %v, jsonLines %v", in, jsonErr, err)
		}
		if err == nil && text != joinLines(want) {
			t.Fatalf("%q: %q, want %q", in, text, joinLines(want))
		}
	})
}
