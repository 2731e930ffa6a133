package tlv

import (
	"math/rand"
	"strconv"
	"strings"
	"testing"
)

func TestParseStdLine(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"[2403010]MAIN_TASK.leaveSVC(ena_tex,ercd=0)", "[2403010]MAIN_TASK.leaveSVC(ena_tex, ercd=0)"},
		{"[4496099]MAIN_TASK.state=READY", "[4496099]MAIN_TASK.state=READY"},
		{"[4496802]TASK(state==RUNNING).state=READY", "[4496802]TASK(state==RUNNING).state=READY"},
		{"  [1f3a]T1.state=RUNNING  \r", "[1f3a]T1.state=RUNNING"},
		{"[1.5]T1.go()", "[1.5]T1.go()"},
		{"[1]T1.f(a(b,c), d)", "[1]T1.f(a(b,c), d)"},
		{"[1]T1.f(, )", "[1]T1.f(, )"},
		{"[1]T(a==f(x) && b!=2).s=x y", "[1]T(a==f(x) && b!=2).s=x y"},
		{"[1]T1.s=", "[1]T1.s="},
		{"[1]T1.args=intno=2.", "[1]T1.args=intno=2."},
		// White space between the parts, as TLV takes it (its FMP rules
		// write "...prcId = ${toPrcId}").
		{"[1]Task(id==2).prcId = 2", "[1]Task(id==2).prcId=2"},
		{"[1]T1.state =RUNNING", "[1]T1.state=RUNNING"},
		{"[1]T1.state=\tRUNNING ", "[1]T1.state=RUNNING"},
		{"[1] T1 . state = RUNNING", "[1]T1.state=RUNNING"},
		{"[1]Task (id==2) .prcId=2", "[1]Task(id==2).prcId=2"},
		{"[1]T1.f ( a, b ) ", "[1]T1.f(a, b)"},
		{"[1]T1.go ( )", "[1]T1.go()"},
	} {
		l, err := ParseStdLine(c.in)
		if err != nil {
			t.Errorf("%q: %v", c.in, err)
			continue
		}
		if got := l.String(); got != c.want {
			t.Errorf("%q: got %q, want %q", c.in, got, c.want)
		}
	}
}

func TestParseStdLineErrors(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"", `1: expected "[" and a time, found end of line`},
		{"1]T.s=1", `1: expected "[" and a time, found "1]T.s=1"`},
		{"[]T.s=1", `2: expected a time (letters and digits), found "]T.s=1"`},
		{"[12 T.s=1", `4: expected "]" after the time, found " T.s=1"`},
		{"[12].s=1", `5: expected a resource or resource type name, found ".s=1"`},
		{"[12]T s=1", `7: expected "." after the resource, found "s=1"`},
		{"[12]T.=1", `7: expected an attribute or behavior name, found "=1"`},
		{"[12]T.s", `8: expected "=" and a value, or "(" and arguments, found end of line`},
		{"[12]T.s 1", `9: expected "=" and a value, or "(" and arguments, found "1"`},
		{"[12]T.s : 1", `9: expected "=" and a value, or "(" and arguments, found ": 1"`},
		{"[12]T . = 1", `9: expected an attribute or behavior name, found "= 1"`},
		{"[12]T.b (1) x", `13: expected end of line after the arguments, found "x"`},
		{"[12]T.b(1", `10: expected ")" closing the arguments, found end of line`},
		{"[12]T.b(1) x", `12: expected end of line after the arguments, found "x"`},
		{"[12]T(s==1.s=1", `15: expected ")" closing the condition, found end of line`},
		{"[12]T(s=1).s=1", `8: expected a comparison operator (==, !=, <, >, <=, >=) after "s", found "=1"`},
		{"[12]T(s==1 &).s=1", `13: expected an attribute comparison (attr==value), true or false, found end of line`},
		{"[12]T(maybe).s=1", `12: expected a comparison operator (==, !=, <, >, <=, >=) after "maybe", found end of line`},
		{"[12]T((s==1).s=1", `17: expected ")" closing the condition, found end of line`},
		{"[一二]T.s=1", `2: expected a time (letters and digits), found "一二]T.s=1"`},
	} {
		_, err := ParseStdLine(c.in)
		if err == nil {
			t.Errorf("%q: no error, want %s", c.in, c.want)
			continue
		}
		if err.Error() != c.want {
			t.Errorf("%q:\n got %s\nwant %s", c.in, err, c.want)
		}
	}
}

// TestCanonical: a line is written as TLV writes it, without the white
// space between its parts; a line without any is itself.
func TestCanonical(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"[2403010]MAIN_TASK.leaveSVC(ena_tex,ercd=0)", "[2403010]MAIN_TASK.leaveSVC(ena_tex,ercd=0)"},
		{"[4496802]TASK(state==RUNNING).state=READY", "[4496802]TASK(state==RUNNING).state=READY"},
		{"[1]Task(id==2).prcId = 2", "[1]Task(id==2).prcId=2"},
		{"  [1] T1 . state =  x y  \r", "[1]T1.state=x y"},
		{"[1]Task ( id == 2 ) .f ( a,  b )", "[1]Task( id == 2 ).f(a,  b)"},
		{"[1]T1.go( )", "[1]T1.go()"},
	} {
		l, err := ParseStdLine(c.in)
		if err != nil {
			t.Errorf("%q: %v", c.in, err)
			continue
		}
		if got := l.Canonical(c.in); got != c.want {
			t.Errorf("%q: got %q, want %q", c.in, got, c.want)
		}
	}
}

func TestParseTime(t *testing.T) {
	us, _ := LookupTimeUnit("us")
	ns, _ := LookupTimeUnit("ns")
	ps, _ := LookupTimeUnit("ps")
	s, _ := LookupTimeUnit("s")
	for _, c := range []struct {
		in     string
		radix  int
		u      TimeUnit
		ns     int64
		raw    int64
		hasRaw bool
		exact  bool
	}{
		{"1926099", 10, us, 1926099000, 0, false, true},
		{"1f3a", 16, ns, 7994, 0, false, true},
		{"1F3A", 16, ns, 7994, 0, false, true},
		{"2a0f.8", 16, ns, 10767, 0, false, false},
		{"1.5", 10, us, 1500, 0, false, true},
		{"1.000", 10, us, 1000, 0, false, true},
		{"1234567", 10, ps, 1234, 1234567, true, false},
		{"2000", 10, ps, 2, 2000, true, true},
		{"9", 10, s, 9_000_000_000, 0, false, true},
		{"101", 2, ns, 5, 0, false, true},
	} {
		got, err := ParseTime(c.in, c.radix, c.u)
		if err != nil {
			t.Errorf("%s: %v", c.in, err)
			continue
		}
		if got.NS != c.ns || got.Raw != c.raw || got.HasRaw != c.hasRaw || got.Exact != c.exact {
			t.Errorf("%s radix %d %s: got %+v", c.in, c.radix, c.u.Name, got)
		}
	}
	for _, c := range []struct {
		in    string
		radix int
		u     TimeUnit
		want  string
	}{
		{"1g", 16, ns, `time "1g": not a number in radix 16`},
		{"99999999999999999999", 10, ns, `time "99999999999999999999": too large`},
		{"9999999999999999", 10, s, `time "9999999999999999": too large for int64 nanoseconds`},
		{"1.x", 10, us, `time "1.x": not a number in radix 10`},
	} {
		_, err := ParseTime(c.in, c.radix, c.u)
		if err == nil || err.Error() != c.want {
			t.Errorf("%s: got %v, want %s", c.in, err, c.want)
		}
	}
}

func TestExpr(t *testing.T) {
	attrs := map[string]string{"state": "RUNNING", "pri": "10", "id": "2", "name": "a b"}
	get := func(n string) string { return attrs[n] }
	for _, c := range []struct {
		in   string
		want bool
	}{
		{"state==RUNNING", true},
		{"state != RUNNING", false},
		{"pri<9", false}, // numbers compare as numbers
		{"pri>9", true},  // (as text "10" < "9")
		{"pri<=10 & id>=2", true},
		{"pri<=10 && id>2", false},
		{"state==READY | id==2", true},
		{"!(state==READY) && true", true},
		{"!state==RUNNING", false},
		{"(state==READY || pri==10) && (id==3 || id==2)", true},
		{"false || TRUE", true},
		{"name==a b", true},
	} {
		e, err := ParseExpr(c.in, true)
		if err != nil {
			t.Errorf("%q: %v", c.in, err)
			continue
		}
		if got := e.Eval(get); got != c.want {
			t.Errorf("%q: %v, want %v", c.in, got, c.want)
		}
	}
	// Rule conditions compare text.
	for _, c := range []struct {
		in   string
		want bool
	}{
		{"True", true},
		{"False", false},
		{"!False", true},
		{"DORMANT==DORMANT && RUNNABLE==RUNNABLE", true},
		{"WAITING==DORMANT && RUNNABLE==RUNNABLE", false},
		{"WAITING-SUSPENDED==WAITING-SUSPENDED", true},
		{"True==true", true},
		{"3<12", true},
	} {
		e, err := ParseExpr(c.in, false)
		if err != nil {
			t.Errorf("%q: %v", c.in, err)
			continue
		}
		if got := e.Eval(nil); got != c.want {
			t.Errorf("%q: %v, want %v", c.in, got, c.want)
		}
	}
	for _, c := range []struct{ in, want string }{
		{"", `1: expected a comparison, true or false, found end of line`},
		{"maybe", `1: expected a comparison, true or false, found "maybe"`},
		{"a==b)", `5: expected an operator or the end of the condition (unbalanced ")"), found ")"`},
		{"(a==b", `6: expected ")", found end of line`},
	} {
		_, err := ParseExpr(c.in, false)
		if err == nil || err.Error() != c.want {
			t.Errorf("%q: got %v, want %s", c.in, err, c.want)
		}
	}
}

// TestParseDigits: parseDigits is strconv.ParseUint of a radix's digits
// (it fails where ParseUint fails, overflow included), parseSmall
// strconv.ParseInt(s, 10, 32) of up to nine decimal digits.
func TestParseDigits(t *testing.T) {
	rnd := rand.New(rand.NewSource(1))
	const alphabet = "0123456789abcdefxyzABCFZ.-+_ "
	for range 200000 {
		b := make([]byte, rnd.Intn(22))
		for i := range b {
			if rnd.Intn(3) == 0 {
				b[i] = alphabet[rnd.Intn(len(alphabet))]
			} else {
				b[i] = alphabet[rnd.Intn(10)]
			}
		}
		s := string(b)
		radix := 2 + rnd.Intn(35)
		if rnd.Intn(2) == 0 {
			radix = []int{10, 16}[rnd.Intn(2)]
		}
		v, ok := parseDigits(s, radix)
		w, err := strconv.ParseUint(s, radix, 64)
		if ok != (err == nil) || ok && v != w {
			t.Fatalf("parseDigits(%q, %d) = %d, %v; ParseUint %d, %v", s, radix, v, ok, w, err)
		}
		n, ok := parseSmall(s)
		m, err := strconv.ParseInt(s, 10, 32)
		if ok && (err != nil || n != m) || !ok && err == nil && len(s) <= 9 && strings.Trim(s, "0123456789") == "" {
			t.Fatalf("parseSmall(%q) = %d, %v; ParseInt %d, %v", s, n, ok, m, err)
		}
	}
}
