package ingest

import (
	"errors"
	"os"
	"strings"
	"testing"
	"testing/iotest"
)

func readAll(t *testing.T, l *LineReader) []string {
	t.Helper()
	var out []string
	for {
		line, ok := l.Next()
		if !ok {
			break
		}
		out = append(out, string(line))
	}
	return out
}

func TestLineEnds(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []string
	}{
		{"", nil},
		{"a", []string{"a"}},
		{"a\n", []string{"a"}},
		{"a\nb", []string{"a", "b"}},
		{"a\r\nb\r\n", []string{"a", "b"}},
		{"a\rb\rc", []string{"a", "b", "c"}},
		{"a\r", []string{"a"}},
		{"a\r\r\nb", []string{"a", "", "b"}},
		{"\n\n", []string{"", ""}},
		{"a\n\r\nb\rc\r\n", []string{"a", "", "b", "c"}},
	} {
		// one byte per read puts every CR at the end of the buffer once
		for _, r := range []*LineReader{NewLineReader(strings.NewReader(tc.in)), NewLineReader(iotest.OneByteReader(strings.NewReader(tc.in)))} {
			got := readAll(t, r)
			if strings.Join(got, "|") != strings.Join(tc.want, "|") || len(got) != len(tc.want) {
				t.Errorf("%q: got %q want %q", tc.in, got, tc.want)
			}
			if r.Err() != nil {
				t.Errorf("%q: %v", tc.in, r.Err())
			}
			if r.Line() != int64(len(tc.want)) {
				t.Errorf("%q: line %d", tc.in, r.Line())
			}
		}
	}
}

func TestLongLines(t *testing.T) {
	long := strings.Repeat("x", 200000)
	r := NewLineReader(strings.NewReader("a\n" + long + "\nb"))
	got := readAll(t, r)
	if len(got) != 3 || got[1] != long || got[2] != "b" {
		t.Fatalf("got %d lines", len(got))
	}
	r = NewLineReader(strings.NewReader("a\n" + long + "\nb"))
	r.SetMax(100000)
	got = readAll(t, r)
	if len(got) != 1 || !errors.Is(r.Err(), ErrLineTooLong) {
		t.Fatalf("got %d lines, err %v", len(got), r.Err())
	}
	if want := "line 2: line too long (more than 100000 bytes)"; r.Err().Error() != want {
		t.Errorf("err %q", r.Err())
	}
}

func FuzzLineReader(f *testing.F) {
	for _, s := range []string{"a\r\nb", "a\rb\n", "\r\r\n\n", "x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r := NewLineReader(iotest.HalfReader(strings.NewReader(s)))
		var got []string
		for {
			line, ok := r.Next()
			if !ok {
				break
			}
			got = append(got, string(line))
		}
		// a second way: normalize line ends and split
		norm := strings.ReplaceAll(strings.ReplaceAll(s, "\r\n", "\n"), "\r", "\n")
		want := strings.Split(norm, "\n")
		if strings.HasSuffix(norm, "\n") || norm == "" {
			want = want[:len(want)-1]
		}
		if strings.Join(got, "\x00") != strings.Join(want, "\x00") || len(got) != len(want) {
			t.Fatalf("%q: got %q want %q", s, got, want)
		}
	})
}

func TestSourceSHA256(t *testing.T) {
	const text = "0,a,0,T,b,0,start\n"
	s := NewSource("x", strings.NewReader(text), int64(len(text)))
	got, err := s.SHA256()
	if err != nil {
		t.Fatal(err)
	}
	path := t.TempDir() + "/x"
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	file, err := FileSHA256(path)
	if err != nil || got != file {
		t.Fatalf("reading hashes %s, the file %s (%v)", got, file, err)
	}
	// A source whose file the caller hashes (ingest.Path) does not hash
	// what it reads, and says it has no sum.
	k := NewSource("y", strings.NewReader(text), int64(len(text)))
	k.NoHash()
	if got, err := k.SHA256(); got != "" || err != nil {
		t.Fatalf("source without hash: %q, %v", got, err)
	}
}

func TestUnterminated(t *testing.T) {
	for in, want := range map[string]bool{"a\nb\n": false, "a\nb": true, "a\r\nb\r\n": false, "": false, "a\r": false} {
		lr := NewLineReader(strings.NewReader(in))
		for {
			if _, ok := lr.Next(); !ok {
				break
			}
		}
		if got := lr.Unterminated(); got != want {
			t.Errorf("%q: Unterminated() = %v, want %v", in, got, want)
		}
	}
}
