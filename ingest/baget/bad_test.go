package baget

import (
	"fmt"
	"strings"
	"testing"
)

// badCase is a description with one error: common holds <dt>s (from line
// 9), events the <event>s (from line 11).
type badCase struct {
	name   string
	common string
	events string
	want   string
}

// xml puts a case into a description.
func (c badCase) xml() string {
	ev := c.events
	if ev == "" {
		ev = `<event Name="E" id="1" time="t"><field Name="t" type_name="int"/></event>`
	}
	return fmt.Sprintf(`<description os="os" arch="a">
<abi endian="little" pointer="4" long_long_align="4" double_align="4"/>
<descriptor type="unsigned short" size="unsigned short"/>
<Objects>
<id type_name="thread_ptr" base="pointer" kind="thread"/>
<id type_name="sem_id" base="int" kind="semaphore" resource="unowned"/>
</Objects>
<Common>
%s
</Common>
%s
</description>
`, c.common, ev)
}

var badCases = []badCase{
	{name: "unknown type in dt",
		common: `<dt Name="a"><field Name="x" type_name="int"/>
<field Name="y" type_name="no_such_t"/></dt>`,
		want: `bad.xml:10: field "y": a base type, object-id type or <dt> name expected, found unknown type "no_such_t"`},
	{name: "unknown type in event",
		events: `<event Name="E" id="1" time="t"><field Name="t" type_name="int"/>
<field Name="z" type_name="strukt"/></event>`,
		want: `bad.xml:12: field "z": a base type, object-id type or <dt> name expected, found unknown type "strukt"`},
	{name: "direct recursion",
		common: `<dt Name="node"><field Name="next" type_name="node"/></dt>`,
		want:   `bad.xml:9: a <dt> that does not contain itself expected, found "node" contains itself: node -> node`},
	{name: "indirect recursion",
		common: `<dt Name="a"><field Name="b" type_name="b"/></dt>
<dt Name="b"><field Name="c" type_name="c" dim="2"/></dt>
<dt Name="c"><field Name="a" type_name="a"/></dt>`,
		want: `bad.xml:9: a <dt> that does not contain itself expected, found "a" contains itself: a -> b -> c -> a`},
	{name: "union first field",
		common: `<dt Name="u" union="1"><field Name="i" type_name="int"/><field Name="f" type_name="float"/></dt>
<dt Name="s"><field Name="v" type_name="u"/></dt>`,
		want: `bad.xml:10: union field "v": a selector (a simple integer field) right before it expected, found none`},
	{name: "union after a float",
		common: `<dt Name="u" union="1"><field Name="i" type_name="int"/><field Name="f" type_name="float"/></dt>`,
		events: `<event Name="E" id="1" time="t"><field Name="t" type_name="int"/>
<field Name="x" type_name="double"/>
<field Name="v" type_name="u"/></event>`,
		want: `bad.xml:13: union field "v": a selector (a simple integer field) right before it expected, found field "x" of type double`},
	{name: "union after an array",
		common: `<dt Name="u" union="1"><field Name="i" type_name="int"/></dt>
<dt Name="s"><field Name="k" type_name="int" dim="2"/><field Name="v" type_name="u"/></dt>`,
		want: `bad.xml:10: union field "v": a selector (a simple integer field) right before it expected, found field "k" of an array`},
	{name: "dim zero in dt",
		common: `<dt Name="s"><field Name="k" type_name="int" dim="0"/></dt>`,
		want:   `bad.xml:9: dim: a flexible array (dim="0") only as the last field of an <event> expected, found it in <dt "s">`},
	{name: "dim negative",
		common: `<dt Name="s"><field Name="k" type_name="int" dim="-3"/></dt>`,
		want:   `bad.xml:9: dim: positive integers up to 1048576 separated by "," expected, found "-3"`},
	{name: "dim too big",
		common: `<dt Name="s"><field Name="k" type_name="int" dim="1048577"/></dt>`,
		want:   `bad.xml:9: dim: positive integers up to 1048576 separated by "," expected, found "1048577"`},
	{name: "dim text",
		common: `<dt Name="s"><field Name="k" type_name="int" dim="2,x"/></dt>`,
		want:   `bad.xml:9: dim: positive integers up to 1048576 separated by "," expected, found "2,x"`},
	{name: "array too large",
		common: `<dt Name="s"><field Name="k" type_name="double" dim="1024,1024"/></dt>`,
		want:   `bad.xml:9: field "k": a size of at most 1048576 bytes expected, found a larger array`},
	{name: "flexible not last",
		events: `<event Name="E" id="1" time="t"><field Name="t" type_name="int"/>
<field Name="d" type_name="char" dim="0"/>
<field Name="z" type_name="int"/></event>`,
		want: `bad.xml:12: dim: a flexible array (dim="0") only as the last field of an <event> expected, found it on "d"`},
	{name: "duplicate event id",
		events: `<event Name="A" id="5" time="t"><field Name="t" type_name="int"/></event>
<event Name="B" id="0x5" time="t"><field Name="t" type_name="int"/></event>`,
		want: `bad.xml:12: an event id unique in the description expected, found 5 again (event "A" at line 11)`},
	{name: "duplicate event name",
		events: `<event Name="A" id="5" time="t"><field Name="t" type_name="int"/></event>
<event Name="A" id="6" time="t"><field Name="t" type_name="int"/></event>`,
		want: `bad.xml:12: an event Name unique in the description expected, found a second "A" (first at line 11)`},
	{name: "id too wide",
		events: `<event Name="A" id="65536" time="t"><field Name="t" type_name="int"/></event>`,
		want:   `bad.xml:11: event "A": an id that fits type_record (unsigned short) expected, found 65536`},
	{name: "missing main field",
		events: `<event Name="A" id="5" time="t" main="sem"><field Name="t" type_name="int"/></event>`,
		want:   `bad.xml:11: event "A": main: an existing field expected, found no field "sem"`},
	{name: "missing pid field",
		events: `<event Name="A" id="5" time="t" pid="p.q"><field Name="t" type_name="int"/></event>`,
		want:   `bad.xml:11: event "A": pid: an existing field expected, found no field "p.q"`},
	{name: "missing time field",
		events: `<event Name="A" id="5" time="when"><field Name="t" type_name="int"/></event>`,
		want:   `bad.xml:11: event "A": time: an existing field expected, found no field "when"`},
	{name: "missing cpu field",
		events: `<event Name="A" id="5" time="t" cpu="core"><field Name="t" type_name="int"/></event>`,
		want:   `bad.xml:11: event "A": cpu: an existing field expected, found no field "core"`},
	{name: "no time attribute",
		events: `<event Name="A" id="5"><field Name="t" type_name="int"/></event>`,
		want:   `bad.xml:11: event "A": a time attribute expected, found none`},
	{name: "time of wrong type",
		events: `<event Name="A" id="5" time="t"><field Name="t" type_name="double"/></event>`,
		want:   `bad.xml:11: event "A": time field "t" of an integer or struct timespec type expected, found type double`},
	{name: "main not an object",
		events: `<event Name="A" id="5" time="t" main="t"><field Name="t" type_name="int"/></event>`,
		want:   `bad.xml:11: event "A": main field "t" of an object-id type (or main_kind) expected, found type int`},
	{name: "main inside array",
		common: `<dt Name="s"><field Name="th" type_name="thread_ptr"/></dt>`,
		events: `<event Name="A" id="5" time="t" main="a.th"><field Name="t" type_name="int"/><field Name="a" type_name="s" dim="2"/></event>`,
		want:   `bad.xml:11: event "A": main: a field outside arrays expected, found "a.th" in an array`},
	{name: "state rule bad state",
		events: `<event Name="A" id="5" time="t"><field Name="t" type_name="int"/><field Name="th" type_name="thread_ptr"/>
<state field="th" to="thrRunning"/></event>`,
		want: `bad.xml:12: <state to=> one of thrInterrupted, thrNotReady, thrReady, thrRun expected, found "thrRunning"`},
	{name: "state rule missing field",
		events: `<event Name="A" id="5" time="t"><field Name="t" type_name="int"/>
<state field="th" to="thrRun"/></event>`,
		want: `bad.xml:12: event "A": state field: an existing field expected, found no field "th"`},
	{name: "resource field of no resource kind",
		events: `<event Name="A" id="5" time="t"><field Name="t" type_name="int"/><field Name="th" type_name="thread_ptr"/>
<resource verb="wait" field="th"/></event>`,
		want: `bad.xml:12: <resource field=> a field of a resource kind (<id resource=>) expected, found "th" of kind thread`},
	{name: "resource bad verb",
		events: `<event Name="A" id="5" time="t"><field Name="t" type_name="int"/><field Name="s" type_name="sem_id"/>
<resource verb="lock" field="s"/></event>`,
		want: `bad.xml:12: <resource verb=> one of assign, give_up, release, request, wait, woken expected, found "lock"`},
	{name: "resource wait without field",
		events: `<event Name="A" id="5" time="t"><field Name="t" type_name="int"/><field Name="s" type_name="sem_id"/>
<resource verb="wait"/></event>`,
		want: `bad.xml:12: <resource> with a field attribute expected, found none`},
	{name: "resource field missing",
		events: `<event Name="A" id="5" time="t"><field Name="t" type_name="int"/>
<resource verb="release" field="sem"/></event>`,
		want: `bad.xml:12: event "A": resource field: an existing field expected, found no field "sem"`},
	{name: "resource actor not an object",
		events: `<event Name="A" id="5" time="t"><field Name="t" type_name="int"/><field Name="s" type_name="sem_id"/>
<resource verb="assign" field="s" actor="t"/></event>`,
		want: `bad.xml:12: <resource actor=> a field of an object-id type expected, found type int`},
	{name: "resource test without bounds",
		events: `<event Name="A" id="5" time="t"><field Name="t" type_name="int"/><field Name="s" type_name="sem_id"/>
<resource verb="assign" field="s" test="t"/></event>`,
		want: `bad.xml:12: <resource test=> with min= or max= expected, found neither`},
	{name: "resource min without test",
		events: `<event Name="A" id="5" time="t"><field Name="t" type_name="int"/><field Name="s" type_name="sem_id"/>
<resource verb="assign" field="s" min="0"/></event>`,
		want: `bad.xml:12: <resource min=> only with test= expected, found min= without test=`},
	{name: "resource min above max",
		events: `<event Name="A" id="5" time="t"><field Name="t" type_name="int"/><field Name="s" type_name="sem_id"/>
<resource verb="assign" field="s" test="t" min="3" max="-1"/></event>`,
		want: `bad.xml:12: <resource> min <= max expected, found min=3 > max=-1`},
	{name: "resource max not a number",
		events: `<event Name="A" id="5" time="t"><field Name="t" type_name="int"/><field Name="s" type_name="sem_id"/>
<resource verb="assign" field="s" test="t" max="many"/></event>`,
		want: `bad.xml:12: <resource max=> an integer expected, found "many"`},
	{name: "resource test of a double",
		events: `<event Name="A" id="5" time="t"><field Name="t" type_name="int"/><field Name="s" type_name="sem_id"/><field Name="d" type_name="double"/>
<resource verb="assign" field="s" test="d" min="0"/></event>`,
		want: `bad.xml:12: <resource test=> an integer field expected, found type double`},
	{name: "resource unknown attribute",
		events: `<event Name="A" id="5" time="t"><field Name="t" type_name="int"/><field Name="s" type_name="sem_id"/>
<resource verb="assign" field="s" id="t"/></event>`,
		want: `bad.xml:12: <resource> attributes verb, field, actor, test, min, max expected, found id="t"`},
	{name: "message on a semaphore",
		events: `<event Name="A" id="5" time="t"><field Name="t" type_name="int"/><field Name="s" type_name="sem_id"/>
<message verb="send" field="s"/></event>`,
		want: `bad.xml:12: <message field=> a field of a queue kind (<id resource="queue">) expected, found "s" of kind semaphore (unowned)`},
	{name: "message bad verb",
		events: `<event Name="A" id="5" time="t"><field Name="t" type_name="int"/><field Name="s" type_name="sem_id"/>
<message verb="assign" field="s"/></event>`,
		want: `bad.xml:12: <message verb=> one of receive, send expected, found "assign"`},
	{name: "message without field",
		events: `<event Name="A" id="5" time="t"><field Name="t" type_name="int"/>
<message verb="receive"/></event>`,
		want: `bad.xml:12: <message> with a field attribute expected, found none`},
	{name: "unknown element",
		events: `<event Name="A" id="5" time="t"><field Name="t" type_name="int"/>
<feild Name="x" type_name="int"/></event>`,
		want: `bad.xml:12: <field>, <creates>, <state>, <cpu>, <resource> or <message> inside <event> expected, found <feild>`},
	{name: "unknown attribute",
		events: `<event Name="A" id="5" time="t"><field Name="t" type_name="int" size="4"/></event>`,
		want:   `bad.xml:11: <field> attributes Name, type_name, dim, format expected, found size="4"`},
	{name: "syntax error",
		events: `<event Name="A" id="5" time="t"><field Name="t" type_name="int"></event>`,
		want:   `bad.xml:11: well-formed XML expected, found: element <field> closed by </event>`},
}

func TestDescriptionErrors(t *testing.T) { checkBadCases(t, badCases) }

// checkBadCases parses each case's description and wants its exact error.
func checkBadCases(t *testing.T, cases []badCase) {
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse("bad.xml", []byte(c.xml()))
			if err == nil {
				t.Fatalf("no error; want %s", c.want)
			}
			if err.Error() != c.want {
				t.Errorf("error\n got %s\nwant %s", err, c.want)
			}
		})
	}
}

// TestDescriptionBounds: a description whose trees would explode
// (every level has four fields of the level below) is refused, fast.
func TestDescriptionBounds(t *testing.T) {
	var b strings.Builder
	b.WriteString(`<dt Name="t0"><field Name="a" type_name="char"/></dt>`)
	for i := 1; i <= 8; i++ {
		fmt.Fprintf(&b, "<dt Name=\"t%d\">", i)
		for _, f := range "abcd" {
			fmt.Fprintf(&b, "<field Name=\"%c\" type_name=\"t%d\"/>", f, i-1)
		}
		b.WriteString("</dt>")
	}
	c := badCase{common: b.String(), events: `<event Name="A" id="5" time="t"><field Name="t" type_name="int"/>
<field Name="x" type_name="t8"/></event>`}
	_, err := Parse("bad.xml", []byte(c.xml()))
	want := `bad.xml:12: at most 65536 nodes in a record's field tree expected, found more through field "x"`
	if err == nil || err.Error() != want {
		t.Errorf("error\n got %v\nwant %s", err, want)
	}
	var deep strings.Builder
	deep.WriteString(`<dt Name="d0"><field Name="a" type_name="char"/></dt>`)
	for i := 1; i <= 16; i++ {
		fmt.Fprintf(&deep, "<dt Name=\"d%d\"><field Name=\"a\" type_name=\"d%d\"/></dt>\n", i, i-1)
	}
	_, err = Parse("bad.xml", []byte(badCase{common: deep.String()}.xml()))
	want = `bad.xml:24: types nested at most 16 deep expected, found deeper through field "a"`
	if err == nil || err.Error() != want {
		t.Errorf("error\n got %v\nwant %s", err, want)
	}
}

// TestResourceKindErrors: <id resource=> names what the objects of its
// kind are, once per kind, and only for kinds that can be resources.
func TestResourceKindErrors(t *testing.T) {
	for _, c := range []struct{ ids, want string }{
		{`<id type_name="s" base="int" kind="semaphore" resource="shared"/>`,
			`bad.xml:5: <id resource=> one of owned, queue, unowned expected, found "shared"`},
		{`<id type_name="t" base="pointer" kind="thread" resource="owned"/>`,
			`bad.xml:5: <id resource=> on a kind of resource expected, found it on kind "thread"`},
		{`<id type_name="m" base="int" kind="mutex" resource="owned"/>
<id type_name="m2" base="short" kind="mutex" resource="unowned"/>`,
			`bad.xml:6: one resource= for kind "mutex" expected, found "owned" and "unowned"`},
	} {
		x := `<description os="os" arch="a">
<abi endian="little" pointer="4" long_long_align="4" double_align="4"/>
<descriptor type="unsigned short" size="unsigned short"/>
<Objects>
` + c.ids + `
</Objects>
<event Name="E" id="1" time="t"><field Name="t" type_name="int"/></event>
</description>`
		_, err := Parse("bad.xml", []byte(x))
		if err == nil || err.Error() != c.want {
			t.Errorf("error\n got %v\nwant %s", err, c.want)
		}
	}
}
