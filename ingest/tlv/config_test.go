package tlv

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/dlclark/regexp2"
	"github.com/traceduck/traceduck/internal/dbtest"
)

// The real TLV files, read in place (never copied into the repository).
const toppersDir = "../../../shared/testdata-external/toppers"

// toppersFile returns the real file whose name ends with suffix; the test
// is skipped when ../shared is absent.
func toppersFile(t testing.TB, suffix string) string {
	t.Helper()
	if _, err := os.Stat(toppersDir); err != nil {
		t.Skip("no ../shared/testdata-external/toppers")
	}
	m, _ := filepath.Glob(filepath.Join(toppersDir, "*"+suffix))
	if len(m) != 1 {
		t.Fatalf("%d files end with %s", len(m), suffix)
	}
	return m[0]
}

func toppersGlob(t testing.TB, pattern string) []string {
	t.Helper()
	if _, err := os.Stat(toppersDir); err != nil {
		t.Skip("no ../shared/testdata-external/toppers")
	}
	m, _ := filepath.Glob(filepath.Join(toppersDir, pattern))
	if len(m) == 0 {
		t.Fatalf("no %s in %s", pattern, toppersDir)
	}
	return m
}

// jcShow prints a parsed value compactly, members in order.
func jcShow(v *jcValue) string {
	switch v.Kind {
	case jcObject:
		var parts []string
		for _, m := range v.Members {
			parts = append(parts, strconv.Quote(m.Key)+":"+jcShow(m.Value))
		}
		return "{" + strings.Join(parts, ",") + "}"
	case jcArray:
		var parts []string
		for _, e := range v.Elems {
			parts = append(parts, jcShow(e))
		}
		return "[" + strings.Join(parts, ",") + "]"
	case jcString:
		return strconv.Quote(v.Text)
	}
	return v.Text
}

func TestJSONCLenient(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"plain", `{"a":1,"b":[true,null,"x"]}`, `{"a":1,"b":[true,null,"x"]}`},
		{"bom", "\xEF\xBB\xBF{\"a\":1}", `{"a":1}`},
		{"trailing commas", `{"a":[1,2,],"b":{"c":3,},}`, `{"a":[1,2],"b":{"c":3}}`},
		{"comments", "/* head */{\"a\" /* in */ : 1, // line\n\"b\":2}", `{"a":1,"b":2}`},
		{"line comment at the end", "{\"a\":1}\n// the end", `{"a":1}`},
		{"empty entries", `{"a":1,,"b":2,,}`, `{"a":1,"b":2}`},
		{"empty entries in a list", `[,1,,2,,]`, `[1,2]`},
		{"only empty entries", `{,,}`, `{}`},
		{"empty entry on its own line", "{\n\"a\":1,\n,\n\"b\":2\n}", `{"a":1,"b":2}`},
		{"crlf", "{\r\n\t\"a\" :\r\n\t\"x\",\r\n}\r\n", `{"a":"x"}`},
		{"order kept", `{"z":1,"a":2,"m":3}`, `{"z":1,"a":2,"m":3}`},
		{"duplicates kept in order", `{"a":1,"a":2}`, `{"a":1,"a":2}`},
		{"backslashes JSON does not know", `{"\[(?<t>\d+)\] x\.":"\w\s\$"}`, `{"\\[(?<t>\\d+)\\] x\\.":"\\w\\s\\$"}`},
		{"JSON escapes", `"q\"b\\s\/n\nt\tu\u0041\ud83d\ude00"`, strconv.Quote("q\"b\\s/n\nt\tuA😀")},
		{"bad \\u kept", `"\u12x"`, strconv.Quote(`\u12x`)},
		{"lone surrogate", `"\ud800"`, strconv.Quote("\uFFFD")},
		{"tab inside a string", "\"a\tb\"", strconv.Quote("a\tb")},
		{"not UTF-8", "\"a\xffb\"", strconv.Quote("a\uFFFDb")},
		{"unicode spaces", "{\u3000\"a\":\u00a01}", `{"a":1}`},
		{"comma after the top value", `{"a":1},`, `{"a":1}`},
		{"numbers as written", `[1.50,-0,1e3]`, `[1.50,-0,1e3]`},
		{"japanese", `{"DisplayName":"タスク"}`, `{"DisplayName":"タスク"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, err := jcParse("x.json", []byte(tc.in))
			if err != nil {
				t.Fatal(err)
			}
			if got := jcShow(d.Root); got != tc.want {
				t.Errorf("got  %s\nwant %s", got, tc.want)
			}
		})
	}
}

func TestJSONCErrors(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"missing comma", "{\n  \"a\": 1\n  \"b\": 2\n}", `x.cnv:3:3: malformed JSON: invalid character '"' after object value (expecting ',' or '}')`},
		{"missing colon", "{\"a\" 1}", `x.cnv:1:6: malformed JSON: invalid character '1' after object name`},
		{"columns count characters", "{\"名前\": 1 \"b\"}", `x.cnv:1:10: malformed JSON: invalid character '"' after object value (expecting ',' or '}')`},
		{"bom is not a column", "\xEF\xBB\xBF{\"a\" 1}", `x.cnv:1:6: malformed JSON: invalid character '1' after object name`},
		{"string not closed", "{\"a\": \"abc\n}", `x.cnv:1:7: malformed JSON: string not closed before the end of the line`},
		{"string not closed at the end", "{\"a\": \"abc", `x.cnv:1:7: malformed JSON: string not closed before the end of the file`},
		{"comment not closed", "{\"a\": 1 /* no end", `x.cnv:1:9: malformed JSON: comment not closed (/* without */)`},
		{"empty file", "\xEF\xBB\xBF \r\n", `x.cnv:2:1: malformed JSON: the file is empty`},
		{"truncated", "{\"a\": [1,", `x.cnv:1:10: malformed JSON: the file ends before the JSON does (a missing } or ]?)`},
		{"bad literal", "{\"a\": yes}", `x.cnv:1:7: malformed JSON: not a JSON value: yes`},
		{"missing value", "{\"a\": ,}", `x.cnv:1:7: malformed JSON: invalid character ',' at start of value`},
		{"two values", "{} {}", `x.cnv:1:4: malformed JSON: invalid character '{' after top-level value`},
		{"too deep", strings.Repeat("[", 300), `x.cnv:1:201: malformed JSON: nested deeper than 200 levels`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := jcParse("x.cnv", []byte(tc.in))
			if err == nil {
				t.Fatal("no error")
			}
			if err.Error() != tc.want {
				t.Errorf("got  %s\nwant %s", err, tc.want)
			}
		})
	}
}

// ---------------------------------------------------------------------
// Rules

func TestParseRulesDemo(t *testing.T) {
	const file = "testdata/config/rules/demo.cnv"
	sets, err := LoadRules(file)
	if err != nil {
		t.Fatal(err)
	}
	if len(sets) != 1 || sets[0].Name != "demo" || len(sets[0].Rules) != 3 {
		t.Fatalf("sets: %+v", sets)
	}
	r := sets[0].Rules
	if r[0].Pattern != `\[(?<time>\d+)\] start (?<id>\d+)\.` {
		t.Errorf("pattern 0: %q", r[0].Pattern)
	}
	if want := (Pos{File: file, Line: 6, Col: 3, Key: r[0].Pattern}); r[0].Pos != want {
		t.Errorf("pos 0: %+v, want %+v", r[0].Pos, want)
	}
	// A list: a block of two cases in order, then two templates (the
	// empty entry between them dropped).
	o := r[0].Outputs
	if len(o) != 3 || o[0].Cond == nil || o[1].Template != "[${time}]$RES_NAME{Job(id==${id})}.state=RUNNING" || o[2].Template != "[${time}]$RES_NAME{Job(id==${id})}.start()" {
		t.Fatalf("outputs 0: %+v", o)
	}
	if c := o[0].Cond; len(c) != 2 || c[0].Condition != "$EXIST{Job(state==RUNNING)}" || c[1].Condition != "${id}==0" ||
		len(c[0].Outputs) != 1 || c[0].Outputs[0].Template != "[${time}]$RES_NAME{Job(state==RUNNING)}.state=READY" ||
		len(c[1].Outputs) != 1 || c[1].Outputs[0].Template != "[${time}]Log.note(zero)" {
		t.Errorf("block: %+v", c)
	}
	if p := o[0].Cond[1].Pos; p.Line != 11 || p.Col != 5 || p.Key != r[0].Pattern {
		t.Errorf("case pos: %+v", p)
	}
	// One block.
	if o := r[1].Outputs; len(o) != 1 || len(o[0].Cond) != 1 || o[0].Cond[0].Condition != "$ATTR{Job(id==${id}).state}==RUNNING" {
		t.Errorf("outputs 1: %+v", o)
	}
	// One template.
	if o := r[2].Outputs; len(o) != 1 || o[0].Cond != nil || o[0].Template != "[${time}]Log.say(${text})" {
		t.Errorf("outputs 2: %+v", o)
	}
}

func TestParseRulesErrors(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"output is a number", "{\n\t\"asp\": {\n\t\t\"\\[(?<time>\\d+)\\] dispatch to task (?<id>\\d+)\\.\": 42\n\t}\n}",
			`asp.cnv:3:53: in rule "\[(?<time>\d+)\] dispatch to task (?<id>...": expected a string, a list or an object, found a number`},
		{"element is a number", `{"s": {"x": ["a", 1]}}`, `asp.cnv:1:19: in rule "x": expected a string or an object, found a number`},
		{"case is true", `{"s": {"x": {"c": true}}}`, `asp.cnv:1:19: in rule "x": expected a string, a list or an object, found true/false`},
		{"invalid regex", `{"s": {"(abc": "x"}}`, "asp.cnv:1:8: in rule \"(abc\": invalid regular expression: missing closing ) in `(abc`"},
		{"empty pattern", `{"s": {"": "x"}}`, `asp.cnv:1:8: a rule with an empty pattern`},
		{"rule twice", `{"s": {"a": "x", "a": "y"}}`, `asp.cnv:1:18: in rule set "s": rule "a" given twice`},
		{"set twice", `{"s": {}, "s": {}}`, `asp.cnv:1:11: rule set "s" given twice`},
		{"set is a list", `{"s": []}`, `asp.cnv:1:7: in rule set "s": expected an object, found a list`},
		{"not an object", `["s"]`, `asp.cnv:1:1: a conversion rule file is a JSON object of rule sets ({"asp": {...}}), found a list`},
		{"empty condition", `{"s": {"x": {" ": "y"}}}`, `asp.cnv:1:14: in rule "x": an empty condition`},
		{"unknown style", `{"s": {"$STYLE": "awk"}}`, `asp.cnv:1:18: in rule set "s": $STYLE: unknown style "awk"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseRules("asp.cnv", []byte(tc.in))
			if err == nil {
				t.Fatal("no error")
			}
			if err.Error() != tc.want {
				t.Errorf("got  %s\nwant %s", err, tc.want)
			}
			var ce *ConfigError
			if !asConfigError(err, &ce) {
				t.Errorf("%T is not a *ConfigError", err)
			}
		})
	}
}

func asConfigError(err error, target **ConfigError) bool {
	ce, ok := err.(*ConfigError)
	if ok {
		*target = ce
	}
	return ok
}

func TestParseRulesShapes(t *testing.T) {
	sets, err := ParseRules("x.cnv", []byte(`{"s": {
		"a": "",
		"b": [],
		"c": ["t1", ["t2", "t3"], {"k": []}],
		"d": {"k1": {"k2": "t"}},
		"$STYLE": "regex"
	}}`))
	if err != nil {
		t.Fatal(err)
	}
	r := sets[0].Rules
	if sets[0].Style != "" || len(r) != 4 {
		t.Fatalf("%+v", sets)
	}
	if len(r[0].Outputs) != 0 || len(r[1].Outputs) != 0 {
		t.Errorf("empty outputs: %+v %+v", r[0].Outputs, r[1].Outputs)
	}
	if o := r[2].Outputs; len(o) != 4 || o[1].Template != "t2" || o[2].Template != "t3" || o[3].Cond == nil || len(o[3].Cond[0].Outputs) != 0 {
		t.Errorf("c: %+v", o)
	}
	if o := r[3].Outputs; len(o) != 1 || o[0].Cond[0].Outputs[0].Cond[0].Condition != "k2" || o[0].Cond[0].Outputs[0].Cond[0].Outputs[0].Template != "t" {
		t.Errorf("d: %+v", o)
	}
}

// ---------------------------------------------------------------------
// Headers and resource files

func TestParseHeadersDemo(t *testing.T) {
	sets, err := LoadHeaders("testdata/config/demo.resh")
	if err != nil {
		t.Fatal(err)
	}
	if len(sets) != 1 || sets[0].Name != "demo" || len(sets[0].Types) != 2 {
		t.Fatalf("%+v", sets)
	}
	job := sets[0].Types[0]
	want := &ResourceType{Name: "Job", DisplayName: "a job",
		Attributes: []AttributeDef{
			{Name: "id", VariableType: "Number", DisplayName: "ID", AllocationType: "Static"},
			{Name: "state", VariableType: "String", AllocationType: "Dynamic", CanGrouping: true, Default: &Value{Name: "state", Text: "IDLE", Kind: KindString}},
		},
		Behaviors: []BehaviorDef{
			{Name: "start", DisplayName: "starts"},
			{Name: "move", Arguments: []ArgumentDef{{"from", "Number"}, {"to", "Number"}}},
		},
		Pos: Pos{File: "testdata/config/demo.resh", Line: 3, Col: 3, Key: "Job"},
	}
	if !reflect.DeepEqual(job, want) {
		t.Errorf("got  %+v\nwant %+v", job, want)
	}
	lg := sets[0].Types[1]
	if lg.Attributes[0].VariableType != "String" || lg.Behaviors[0].Arguments[0] != (ArgumentDef{"what", "String"}) {
		t.Errorf("Logger: %+v", lg)
	}
}

func TestParseHeadersErrors(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"CanGrouping", `{"s": {"T": {"Attributes": {"a": {"CanGrouping": 3}}}}}`, `h.resh:1:50: in type "T" attribute "a": CanGrouping: expected true or false, found a number`},
		{"attributes list", `{"s": {"T": {"Attributes": ["a"]}}}`, `h.resh:1:28: in type "T": Attributes: expected an object, found a list`},
		{"type twice", `{"s": {"T": {}, "T": {}}}`, `h.resh:1:17: resource type "T" given twice`},
		{"default object", `{"s": {"T": {"Attributes": {"a": {"Default": {}}}}}}`, `h.resh:1:46: in type "T" attribute "a": Default: expected a string, a number, true/false or null, found an object`},
		{"CPU not an object", `{"s": {"T": {"CPU": "task"}}}`, `h.resh:1:21: in type "T": CPU: expected an object, found a string`},
		{"CPU no role", `{"s": {"T": {"CPU": {}}}}`, `h.resh:1:21: in type "T": CPU: no Role (task, interrupt, idle or none)`},
		{"CPU bad role", `{"s": {"T": {"CPU": {"Role": "thread"}}}}`, `h.resh:1:30: in type "T": CPU: Role: expected task, interrupt, idle or none, found "thread"`},
		{"CPU role number", `{"s": {"T": {"CPU": {"Role": 1}}}}`, `h.resh:1:30: in type "T": CPU: Role: expected task, interrupt, idle or none, found a number`},
		{"CPU unknown key", `{"s": {"T": {"CPU": {"Role": "task", "Run": ["x"]}}}}`, `h.resh:1:38: in type "T": CPU: unknown key "Run" (expected Role, Attribute, Running, Processor or Idle)`},
		{"CPU key twice", `{"s": {"T": {"CPU": {"Role": "task", "Role": "idle"}}}}`, `h.resh:1:38: in type "T": CPU key "Role" given twice`},
		{"CPU running not a list", `{"s": {"T": {"Attributes": {"state": {}}, "CPU": {"Role": "task", "Running": "RUNNING"}}}}`, `h.resh:1:78: in type "T": CPU: Running: expected a list of the values that mean running, found a string`},
		{"CPU running empty", `{"s": {"T": {"CPU": {"Role": "task", "Running": []}}}}`, `h.resh:1:49: in type "T": CPU: Running: expected a list of the values that mean running, found an empty list`},
		{"CPU running object", `{"s": {"T": {"CPU": {"Role": "task", "Running": [{}]}}}}`, `h.resh:1:50: in type "T": CPU: Running: expected a value (a string, a number or true/false), found an empty object`},
		{"CPU empty attribute", `{"s": {"T": {"CPU": {"Role": "task", "Attribute": ""}}}}`, `h.resh:1:51: in type "T": CPU: Attribute: expected the name of an attribute of the type, found an empty string`},
		{"CPU undeclared attribute", `{"s": {"T": {"Attributes": {"st": {}}, "CPU": {"Role": "task", "Attribute": "state"}}}}`, `h.resh:1:77: in type "T": CPU: Attribute "state": the type declares no such attribute (it has st)`},
		{"CPU undeclared processor", `{"s": {"T": {"Attributes": {"state": {}}, "CPU": {"Role": "task", "Processor": "prc"}}}}`, `h.resh:1:80: in type "T": CPU: Processor "prc": the type declares no such attribute (it has state)`},
		{"CPU static attribute", `{"s": {"T": {"Attributes": {"s": {"AllocationType": "Static"}}, "CPU": {"Role": "task", "Attribute": "s"}}}}`, `h.resh:1:102: in type "T": CPU: Attribute "s" is Static: the trace never changes it, so it cannot say when a resource runs`},
		{"CPU no state", `{"s": {"T": {"CPU": {"Role": "interrupt"}}}}`, `h.resh:1:21: in type "T": CPU: no Attribute, and the type has no attribute "state" (the default): name the attribute whose value says it runs`},
		{"CPU none with more", `{"s": {"T": {"CPU": {"Role": "none", "Running": ["x"]}}}}`, `h.resh:1:38: in type "T": CPU: Running: a type of Role none holds no processor and takes no other key`},
		{"CPU idle of interrupts", `{"s": {"T": {"Attributes": {"state": {}}, "CPU": {"Role": "interrupt", "Idle": ["x"]}}}}`, `h.resh:1:72: in type "T": CPU: Idle names idle tasks among the resources of a type of Role task, not interrupt`},
		{"CPU idle bad glob", `{"s": {"T": {"Attributes": {"state": {}}, "CPU": {"Role": "task", "Idle": ["a[b"]}}}}`, `h.resh:1:76: in type "T": CPU: Idle: idle-task pattern "a[b": expected ] to close the [ at column 2, found the end of the pattern`},
		{"Priority not an object", `{"s": {"T": {"Priority": 1}}}`, `h.resh:1:26: in type "T": Priority: expected an object, found a number`},
		{"Priority unknown key", `{"s": {"T": {"Priority": {"Attr": "pri"}}}}`, `h.resh:1:27: in type "T": Priority: unknown key "Attr" (expected Attribute or Order)`},
		{"Priority no attribute", `{"s": {"T": {"Priority": {"Attribute": "pri", "Order": "lower_first"}}}}`, `h.resh:1:40: in type "T": Priority: Attribute "pri": the type declares no such attribute`},
		{"Priority not a number", `{"s": {"T": {"Attributes": {"pri": {"VariableType": "String"}}, "Priority": {"Attribute": "pri", "Order": "lower_first"}}}}`, `h.resh:1:91: in type "T": Priority: Attribute "pri": expected a Number attribute, found VariableType "String"`},
		{"Priority bad order", `{"s": {"T": {"Attributes": {"pri": {"VariableType": "Number"}}, "Priority": {"Attribute": "pri", "Order": "up"}}}}`, `h.resh:1:107: in type "T": Priority: Order: expected lower_first or higher_first, found "up"`},
		{"Priority no order", `{"s": {"T": {"Attributes": {"pri": {"VariableType": "Number"}}, "Priority": {"Attribute": "pri"}}}}`, `h.resh:1:77: in type "T": Priority: expected Attribute and Order (lower_first or higher_first)`},
		{"Waits not an object", `{"s": {"T": {"Waits": []}}}`, `h.resh:1:23: in type "T": Waits: expected an object, found a list`},
		{"Waits unknown key", `{"s": {"T": {"Waits": {"Wait": 1, "Enter": "e"}}}}`, `h.resh:1:24: in type "T": Waits: unknown key "Wait" (expected Enter, Leave, Attribute, Blocked, Granted or Calls)`},
		{"Waits no behavior", `{"s": {"T": {"Waits": {"Enter": "e"}}}}`, `h.resh:1:33: in type "T": Waits: Enter "e": the type declares no such behavior`},
		{"Waits missing", `{"s": {"T": {"Attributes": {"state": {}}, "Behaviors": {"e": {}, "l": {}}, "Waits": {"Enter": "e", "Leave": "l", "Blocked": ["W"], "Granted": "ercd=0"}}}}`, `h.resh:1:85: in type "T": Waits: no Calls`},
		{"Waits static attribute", `{"s": {"T": {"Attributes": {"st": {"AllocationType": "Static"}}, "Waits": {"Attribute": "st"}}}}`, `h.resh:1:89: in type "T": Waits: Attribute "st" is Static: the trace never changes it, so it cannot say when a resource blocks`},
		{"Waits blocked empty", `{"s": {"T": {"Waits": {"Blocked": []}}}}`, `h.resh:1:35: in type "T": Waits: Blocked: expected a list of the values that mean blocked, found an empty list`},
		{"Waits call no kind", `{"s": {"T": {"Waits": {"Calls": {"wai_sem": {"Object": "semid"}}}}}}`, `h.resh:1:45: in type "T": Waits: Calls: "wai_sem": expected both Object (the argument that numbers the object) and Kind`},
		{"Waits call bad key", `{"s": {"T": {"Waits": {"Calls": {"wai_sem": {"Obj": "semid"}}}}}}`, `h.resh:1:46: in type "T": Waits: Calls: "wai_sem": unknown key "Obj" (expected Object or Kind)`},
		{"Waits no state", `{"s": {"T": {"Behaviors": {"e": {}, "l": {}}, "Waits": {"Enter": "e", "Leave": "l", "Blocked": ["W"], "Granted": "ercd=0", "Calls": {"c": {"Object": "id", "Kind": "k"}}}}}}`, `h.resh:1:56: in type "T": Waits: no Attribute, and the type has no attribute "state" (the default): name the attribute whose value says it is blocked`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseHeaders("h.resh", []byte(tc.in))
			if err == nil {
				t.Fatal("no error")
			}
			if err.Error() != tc.want {
				t.Errorf("got  %s\nwant %s", err, tc.want)
			}
		})
	}
}

// TestParseHeadersCPU reads traceduck's key CPU of a resource type.
func TestParseHeadersCPU(t *testing.T) {
	sets, err := ParseHeaders("h.resh", []byte(`{"s": {
		"Thread": {"Attributes": {"st": {}, "core": {}}, "CPU": {"Role": "task", "Attribute": "st", "Running": ["run", 1, true], "Processor": "core", "Idle": ["idle*"]}},
		"Irq": {"Attributes": {"state": {}}, "CPU": {"Role": "interrupt"}},
		"Sem": {"CPU": {"Role": "none"}},
		"Plain": {"Attributes": {"state": {}}}}}`))
	if err != nil {
		t.Fatal(err)
	}
	ty := sets[0].Types
	want := &CPUDef{Role: "task", Attribute: "st", Running: []string{"run", "1", "true"}, Processor: "core", Idle: []string{"idle*"}, Pos: Pos{File: "h.resh", Line: 2, Col: 59, Key: "Thread"}}
	if !reflect.DeepEqual(ty[0].CPU, want) {
		t.Errorf("Thread: %+v\nwant %+v", ty[0].CPU, want)
	}
	if ty[1].CPU == nil || ty[1].CPU.Role != "interrupt" || ty[1].CPU.Attribute != "" || ty[1].CPU.Running != nil {
		t.Errorf("Irq: %+v", ty[1].CPU)
	}
	if ty[2].CPU == nil || ty[2].CPU.Role != "none" || ty[3].CPU != nil {
		t.Errorf("Sem: %+v, Plain: %+v", ty[2].CPU, ty[3].CPU)
	}
}

func TestParseResourceFileErrors(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"time scale", `{"TimeScale": "weeks"}`, `r.res:1:15: TimeScale "weeks": expected s, ms, us, ns, ps or fs`},
		{"radix", `{"TimeRadix": 1}`, `r.res:1:15: TimeRadix: expected 10, 16, 8 or 2 (any base from 2 to 36), found 1`},
		{"no type", `{"Resources": {"A": {"Attributes": {}}}}`, `r.res:1:16: in resource "A": no Type`},
		{"attribute list", `{"Resources": {"A": {"Type": "T", "Attributes": {"x": [1]}}}}`, `r.res:1:55: in resource "A": attribute "x": expected a string, a number, true/false or null, found a list`},
		{"resource twice", `{"Resources": {"A": {"Type": "T"}, "A": {"Type": "T"}}}`, `r.res:1:36: resource "A" given twice`},
		{"names", `{"ConvertRules": [1]}`, `r.res:1:19: ConvertRules: expected a name (a string), found a number`},
		{"xml", "<?xml version=\"1.0\"?>\n<resources/>", `r.res:1:1: not a TLV resource file in JSON: this is the XML resource format of early TLV versions, which traceduck does not read`},
		{"csv", "# TYPE, ID, NAME\nTSK, 1, TASK1", `r.res:1:1: not a TLV resource file: a resource file is a JSON object ({...}); this one starts with "# TYPE, ID, NAME"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseResourceFile("r.res", []byte(tc.in))
			if err == nil {
				t.Fatal("no error")
			}
			if err.Error() != tc.want {
				t.Errorf("got  %s\nwant %s", err, tc.want)
			}
		})
	}
}

func TestParseResourceFileForms(t *testing.T) {
	rf, err := ParseResourceFile("r.res", []byte(`{
		"TimeScale": " us ", "TimeRadix": "16",
		"ConvertRules": "one", "VisualizeRules": null, "ResourceHeaders": ["", "h", ""],
		"Path": "C:\\x.res", "StatisticsGenerationRules": ["s"],
		"Resources": {"A": {"Type": "T", "Visible": true, "Attributes": {"s": "x", "n": 1.5, "b": false, "z": null}}}
	}`))
	if err != nil {
		t.Fatal(err)
	}
	want := &ResourceFile{Path: "r.res", TimeScale: "us", TimeRadix: 16, ConvertRules: []string{"one"}, ConvertRulesSet: true, ResourceHeaders: []string{"h"},
		Resources: []Resource{{Name: "A", Type: "T", Pos: Pos{File: "r.res", Line: 5, Col: 17, Key: "A"}, Attributes: []Value{
			{"s", "x", KindString}, {"n", "1.5", KindNumber}, {"b", "false", KindBool}, {"z", "", KindNull}}}}}
	if !reflect.DeepEqual(rf, want) {
		t.Errorf("got  %+v\nwant %+v", rf, want)
	}
}

// ---------------------------------------------------------------------
// Load

func TestLoadDemo(t *testing.T) {
	for _, tc := range []struct {
		name           string
		rules, headers []string
	}{
		{"directories", []string{"testdata/config/rules"}, []string{"testdata/config"}},
		{"files", []string{"testdata/config/rules/demo.cnv"}, []string{"testdata/config/demo.resh"}},
		{"several", []string{"testdata/config/tlvlayout", "testdata/config/rules"}, []string{"testdata/config/tlvlayout", "testdata/config/demo.resh"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := Load("testdata/config/demo.res", tc.rules, tc.headers)
			if err != nil {
				t.Fatal(err)
			}
			if c.Res.TimeScale != "ms" || c.Res.TimeRadix != 16 || len(c.Res.VisualizeRules) != 0 {
				t.Errorf("res: %+v", c.Res)
			}
			if len(c.RuleSets) != 1 || c.RuleSets[0].Name != "demo" || len(c.Rules) != 3 || !c.Converts() {
				t.Errorf("rules: %+v", c.RuleSets)
			}
			if len(c.Types) != 2 || c.Types["Job"] == nil || c.Types["Logger"] == nil || len(c.Warnings) != 0 {
				t.Errorf("types: %v, warnings: %v", c.Types, c.Warnings)
			}
			if tl := c.TypeList(); len(tl) != 2 || tl[0].Name != "Job" {
				t.Errorf("type list: %v", tl)
			}
			var names []string
			for _, r := range c.Res.Resources {
				names = append(names, r.Name+":"+r.Type)
			}
			if strings.Join(names, " ") != "JOB1:Job JOB2:Job Log:Logger" {
				t.Errorf("resources: %v", names)
			}
			if got := c.InitialAttributes(&c.Res.Resources[1]); !reflect.DeepEqual(got, []Value{{"id", "2", KindNumber}, {"state", "IDLE", KindString}}) {
				t.Errorf("initial attributes: %+v", got)
			}
			if s := c.Setup(); s.Res != c.Res || len(s.Types) != 2 || len(s.Rules) != 1 {
				t.Errorf("setup: %+v", s)
			}
			if !strings.HasSuffix(c.Sources["rules demo"], "demo.cnv") || !strings.HasSuffix(c.Sources["headers demo"], "demo.resh") {
				t.Errorf("sources: %v", c.Sources)
			}
		})
	}
}

func TestLoadTLVLayout(t *testing.T) {
	c, err := Load("testdata/config/other.res", []string{"testdata/config/tlvlayout"}, []string{"testdata/config/tlvlayout"})
	if err != nil {
		t.Fatal(err)
	}
	if c.Sources["rules other"] != filepath.Join("testdata/config/tlvlayout/convertRules/other.cnv") || len(c.Rules) != 1 {
		t.Errorf("%v", c.Sources)
	}
}

func TestLoadErrors(t *testing.T) {
	rules, headers := []string{"testdata/config/rules"}, []string{"testdata/config"}
	for _, tc := range []struct {
		name, res      string
		rules, headers []string
		want           string
	}{
		{"unknown type", "unknown-type.res", rules, headers,
			`testdata/config/unknown-type.res:7:21: in resource "JOB2": unknown resource type "Jbo" (the headers demo declare Job, Logger)`},
		{"missing rule set", "missing-set.res", rules, headers,
			`testdata/config/missing-set.res:3:27: rule set "nosuch" not found in testdata/config/rules or the bundled rule sets (asp, fmp)`},
		{"missing rule set, nothing given", "missing-set.res", nil, headers,
			`testdata/config/missing-set.res:3:19: rule set "demo" not found in the bundled rule sets (asp, fmp); give the .cnv file or its directory with --rules`},
		{"missing header set", "demo.res", rules, nil,
			`testdata/config/demo.res:6:21: header set "demo" not found in the bundled header sets (asp, fmp); give the .resh file or its directory with --headers`},
		{"script", "script.res", rules, headers,
			`testdata/config/script.res:2:19: rule set "demo_script" (testdata/config/rules/script.cnv) is a script rule set ($STYLE "script": TLV ran an external program to convert the log); traceduck does not run conversion scripts: convert the log to the standard format first, or give rules of regular expressions`},
		{"no such directory", "demo.res", []string{"testdata/nosuch"}, headers,
			`testdata/config/demo.res:4:21: testdata/nosuch: no such file or directory`},
		{"rule file that does not parse", "demo.res", []string{"testdata/config/demo.res"}, headers,
			`testdata/config/demo.res:2:15: in rule set "TimeScale": expected an object, found a string`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Load(filepath.Join("testdata/config", tc.res), tc.rules, tc.headers)
			if err == nil {
				t.Fatal("no error")
			}
			if err.Error() != tc.want {
				t.Errorf("got  %s\nwant %s", err, tc.want)
			}
		})
	}
}

func TestLoadWarnings(t *testing.T) {
	c, err := Load("testdata/config/undeclared.res", nil, []string{"testdata/config"})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, w := range c.Warnings {
		got = append(got, w.Error())
	}
	want := []string{
		`testdata/config/undeclared.res:6:44: in resource "JOB1": attribute "id" is a Number, given "one"`,
		`testdata/config/undeclared.res:6:57: in resource "JOB1": attribute "colour" is not declared by type Job`,
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got  %q\nwant %q", got, want)
	}
	if c.Converts() {
		t.Error("ConvertRules [] converts")
	}
}

func TestLoadDefaultsAndGivenSets(t *testing.T) {
	dir := t.TempDir()
	res := filepath.Join(dir, "app.res")
	if err := os.WriteFile(res, []byte(`{"TimeScale": "us", "Resources": {"CurrentContext": {"Type": "Context", "Attributes": {"name": "None"}},
		"TASK1": {"Type": "Task", "Attributes": {"id": 1}}}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	// toppers-asp: the bundled "asp" stands for the names the file lacks.
	c, err := ToppersConfig("asp", res, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if c.Sources["rules asp"] != "bundled:asp.cnv" || c.Sources["headers asp"] != "bundled:asp.resh" || len(c.Rules) == 0 {
		t.Errorf("sources: %v", c.Sources)
	}
	// The ingesters' loader does the same with forceRules.
	s, err := LoadSetup(res, nil, nil, []string{"fmp"})
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Rules) != 1 || s.Rules[0].Name != "fmp" {
		t.Errorf("setup rules: %v", s.Rules)
	}
	// A rule file given by name: all its sets; headers given in memory.
	c, err = LoadOptions(res, Options{
		RulePaths:  []string{"testdata/config/tlvlayout/convertRules/other.cnv"},
		HeaderSets: []HeaderSet{{Name: "mem", Types: []*ResourceType{{Name: "Context"}, {Name: "Task"}}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(c.RuleSets) != 1 || c.RuleSets[0].Name != "other" || c.Sources["headers mem"] != "given" || len(c.Warnings) != 2 {
		t.Errorf("rule sets %v, sources %v, warnings %v", c.RuleSets, c.Sources, c.Warnings)
	}
	// A standard-format log: no rules, no resource file.
	c, err = StandardConfig(nil, nil)
	if err != nil || c.Converts() || len(c.Types) != 0 || c.Res.TimeRadix != 10 {
		t.Errorf("standard config: %+v, %v", c, err)
	}
}

func TestTypeDeclaredTwice(t *testing.T) {
	c, err := NewConfig(&ResourceFile{Path: "m.res", ResourceHeaders: []string{"a", "b"}}, Options{HeaderSets: []HeaderSet{
		{Name: "a", Types: []*ResourceType{{Name: "T", DisplayName: "first", Pos: Pos{File: "a.resh", Line: 2, Col: 3}}, {Name: "U"}}},
		{Name: "b", Types: []*ResourceType{{Name: "T", DisplayName: "second", Pos: Pos{File: "b.resh", Line: 4, Col: 5}}}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	if c.Types["T"].DisplayName != "second" || len(c.Warnings) != 1 ||
		c.Warnings[0].Error() != `b.resh:4:5: in type "T": declared again (first at a.resh:2:3); this declaration is used` {
		t.Errorf("%v %v", c.Types, c.Warnings)
	}
	if tl := c.TypeList(); len(tl) != 2 || tl[0].DisplayName != "second" || tl[1].Name != "U" {
		t.Errorf("type list: %v", tl)
	}
}

// ---------------------------------------------------------------------
// TLV's own files, read in place

func TestRealRules(t *testing.T) {
	sets, err := LoadRules(toppersFile(t, "__convertRules__asp.cnv"))
	if err != nil {
		t.Fatal(err)
	}
	if len(sets) != 1 || sets[0].Name != "asp" || sets[0].Style != "" || len(sets[0].Rules) != 28 {
		t.Fatalf("%d sets, %d rules", len(sets), len(sets[0].Rules))
	}
	r := sets[0].Rules
	if r[0].Pattern != `\[(?<time>\d+)\] dispatch to task (?<id>\d+)\.` || r[0].Pos.Line != 4 || r[0].Pos.Col != 3 {
		t.Errorf("first rule: %q at %+v", r[0].Pattern, r[0].Pos)
	}
	// dispatch: a block (preempt the RUNNING task), then three templates.
	if o := r[0].Outputs; len(o) != 4 || len(o[0].Cond) != 1 || o[0].Cond[0].Condition != "$EXIST{Task(state==RUNNING)}" ||
		len(o[0].Cond[0].Outputs) != 2 || o[3].Template != "[${time}]CurrentContext.name=$RES_NAME{Task(id==${id})}" {
		t.Errorf("dispatch outputs: %+v", o)
	}
	// becomes: 13 cases in file order, then the state.
	o := r[1].Outputs
	if len(o) != 2 || len(o[0].Cond) != 13 || o[1].Template != "[${time}]$RES_NAME{Task(id==${id})}.state=${state}" {
		t.Fatalf("becomes outputs: %+v", o)
	}
	if c := o[0].Cond; c[0].Condition != "$ATTR{Task(id==${id}).state}==DORMANT && ${state}==RUNNABLE" ||
		c[0].Outputs[0].Template != "[${time}]$RES_NAME{Task(id==${id})}.activate()" ||
		c[7].Condition != "$ATTR{Task(id==${id}).state}==WAITING && ${state}==RUNNABLE" ||
		c[12].Condition != "$ATTR{Task(id==${id}).state}==RUNNABLE && ${state}==DORMANT" {
		t.Errorf("cases: %q / %q / %q", c[0].Condition, c[7].Condition, c[12].Condition)
	}
	// enter to: one block (an object, not a list).
	if o := r[2].Outputs; len(o) != 1 || len(o[0].Cond) != 1 || !strings.HasSuffix(o[0].Cond[0].Outputs[0].Template, ".enterSVC(${name}, ${args})") {
		t.Errorf("enter outputs: %+v", o)
	}
	// applog: a string output.
	if o := r[24].Outputs; len(o) != 1 || o[0].Template != "[${time}]$RES_NAME{ApplogString(id==${rid})}.str=${str}" {
		t.Errorf("applog outputs: %+v", o)
	}
	for _, suffix := range []string{"__asp2.cnv", "__asp_script.cnv"} {
		sets, err := LoadRules(toppersFile(t, suffix))
		if err != nil || len(sets) != 1 || sets[0].Style != "script" || len(sets[0].Rules) != 0 {
			t.Errorf("%s: %+v, %v", suffix, sets, err)
		}
	}
}

func TestRealHeaders(t *testing.T) {
	sets, err := LoadHeaders(toppersFile(t, "__asp.resh"))
	if err != nil {
		t.Fatal(err)
	}
	if len(sets) != 1 || sets[0].Name != "asp" {
		t.Fatalf("%+v", sets)
	}
	var names []string
	var task *ResourceType
	for _, ty := range sets[0].Types {
		names = append(names, ty.Name)
		if ty.Name == "Task" {
			task = ty
		}
	}
	if got := strings.Join(names, " "); got != "Context InterruptHandler InterruptServiceRoutine CyclicHandler AlarmHandler CPUExceptionHandler TaskExceptionRoutine Task ApplogString ApplogState" {
		t.Errorf("types: %s", got)
	}
	var attrs []string
	for _, a := range task.Attributes {
		attrs = append(attrs, a.Name)
	}
	if got := strings.Join(attrs, " "); got != "id atr pri exinf task stksz stk state applog_str applog_state" {
		t.Errorf("Task attributes: %s", got)
	}
	if a := task.Attributes[7]; a.DisplayName != "状態" || a.AllocationType != "Dynamic" || a.Default == nil || a.Default.Text != "DORMANT" {
		t.Errorf("state: %+v", a)
	}
	if a := task.Attributes[9]; a.Default == nil || *a.Default != (Value{"applog_state", "0", KindNumber}) {
		t.Errorf("applog_state: %+v", a)
	}
	var svc *BehaviorDef
	for i, b := range task.Behaviors {
		if b.Name == "enterSVC" {
			svc = &task.Behaviors[i]
		}
	}
	if svc == nil || !reflect.DeepEqual(svc.Arguments, []ArgumentDef{{"name", "String"}, {"args", "String"}}) {
		t.Errorf("enterSVC: %+v", svc)
	}
}

func TestRealResourceFiles(t *testing.T) {
	for _, f := range toppersGlob(t, "*.res") {
		name := filepath.Base(f)
		t.Run(name, func(t *testing.T) {
			switch {
			case strings.Contains(name, "XMLver"):
				_, err := LoadResourceFile(f)
				if err == nil || err.Error() != f+":1:1: not a TLV resource file in JSON: this is the XML resource format of early TLV versions, which traceduck does not read" {
					t.Errorf("XML: %v", err)
				}
				return
			case strings.Contains(name, "tags__0_1"):
				_, err := LoadResourceFile(f)
				if err == nil || err.Error() != f+`:1:1: not a TLV resource file: a resource file is a JSON object ({...}); this one starts with "# TYPE, ID, NAME, ATR, PRI, EXINF, STKSI..."` {
					t.Errorf("CSV: %v", err)
				}
				return
			}
			// TLV's own rules and headers (found by scanning the directory:
			// the files carry prefixes), then the bundled ones.
			for _, dirs := range [][]string{{toppersDir}, nil} {
				c, err := Load(f, dirs, dirs)
				if err != nil {
					t.Fatal(err)
				}
				if len(c.Warnings) != 0 {
					t.Errorf("warnings: %v", c.Warnings)
				}
				if c.Res.TimeScale != "us" || c.Res.TimeRadix != 10 || c.Res.Resources[0].Name != "CurrentContext" {
					t.Errorf("res: %+v", c.Res)
				}
				std := strings.Contains(name, "standard_format")
				if c.Converts() == std {
					t.Errorf("converts: %v", c.Converts())
				}
			}
		})
	}
	// Spot checks of one file.
	rf, err := LoadResourceFile(toppersFile(t, "__asp_short.res"))
	if err != nil {
		t.Fatal(err)
	}
	if len(rf.Resources) != 12 || !reflect.DeepEqual(rf.ConvertRules, []string{"asp"}) || !reflect.DeepEqual(rf.VisualizeRules, []string{"toppers", "asp"}) {
		t.Errorf("%+v", rf)
	}
	lt := rf.Resources[1]
	want := []Value{{"id", "1", KindNumber}, {"atr", "TA_ACT", KindString}, {"pri", "3", KindNumber}, {"exinf", "LOGTASK_PORTID", KindString},
		{"task", "logtask_main", KindString}, {"stksz", "1024", KindNumber}, {"stk", "NULL", KindString}, {"state", "RUNNABLE", KindString}}
	if lt.Name != "LOGTASK" || lt.Type != "Task" || !reflect.DeepEqual(lt.Attributes, want) || lt.Pos.Line != 16 || lt.Pos.Col != 3 {
		t.Errorf("LOGTASK: %+v", lt)
	}
	// The empty entry (",") on a line of its own.
	rf, err = LoadResourceFile(toppersFile(t, "__asp_trace_log_sample.res"))
	if err != nil || len(rf.Resources) != 11 || rf.Resources[7].Name != "CYCHDR1" {
		t.Errorf("trace_log_sample: %v", err)
	}
}

// ---------------------------------------------------------------------
// The bundled TOPPERS rules and headers

func TestBundled(t *testing.T) {
	rules, err := BundledRuleSets()
	if err != nil {
		t.Fatal(err)
	}
	headers, err := BundledHeaderSets()
	if err != nil {
		t.Fatal(err)
	}
	if len(rules) != 2 || rules[0].Name != "asp" || rules[1].Name != "fmp" || len(headers) != 2 || headers[0].Name != "asp" || headers[1].Name != "fmp" {
		t.Fatalf("rules %v, headers %v", rules, headers)
	}
	ref := regexp.MustCompile(`\$RES_NAME\{(\w+)(?:\([^{}]*?\))?\}\.(\w+)(\(|=)|(CurrentContext(?:_PRC\$\{prc\})?)\.(\w+)(=)`)
	for i, set := range rules {
		types := map[string]*ResourceType{}
		for _, ty := range headers[i].Types {
			types[ty.Name] = ty
		}
		for _, want := range []string{"Context", "Task", "InterruptHandler", "InterruptServiceRoutine", "CyclicHandler", "AlarmHandler", "CPUExceptionHandler", "TaskExceptionRoutine", "ApplogString", "ApplogState"} {
			if types[want] == nil {
				t.Errorf("%s: no type %s", set.Name, want)
			}
		}
		for _, r := range set.Rules {
			re, err := regexp2.Compile(r.Pattern, regexp2.None)
			if err != nil {
				t.Errorf("%s: %q: %v", set.Name, r.Pattern, err)
				continue
			}
			groups := strings.Join(re.GetGroupNames(), " ")
			if !strings.Contains(" "+groups+" ", " time ") {
				t.Errorf("%s: %q has no group time", set.Name, r.Pattern)
			}
			if set.Name == "fmp" && !strings.Contains(" "+groups+" ", " prc ") {
				t.Errorf("fmp: %q has no group prc", r.Pattern)
			}
			// Every resource type, attribute and behavior the outputs name
			// is declared by the bundled header of the set.
			walkTemplates(r.Outputs, func(tpl string) {
				for _, m := range ref.FindAllStringSubmatch(tpl, -1) {
					typ, name, op := m[1], m[2], m[3]
					if typ == "" {
						typ, name, op = "Context", m[5], m[6]
					}
					ty := types[typ]
					if ty == nil {
						t.Errorf("%s: %q: no type %s", set.Name, tpl, typ)
						continue
					}
					if op == "=" && ty.attribute(name) == nil {
						t.Errorf("%s: %q: %s has no attribute %s", set.Name, tpl, typ, name)
					}
					if op == "(" && !hasBehavior(ty, name) {
						t.Errorf("%s: %q: %s has no behavior %s", set.Name, tpl, typ, name)
					}
				}
			})
		}
	}
	// The bundled files are also readable as files.
	if data, err := BundledFS().Open("fmp.cnv"); err != nil {
		t.Error(err)
	} else {
		data.Close()
	}
}

func hasBehavior(t *ResourceType, name string) bool {
	for _, b := range t.Behaviors {
		if b.Name == name {
			return true
		}
	}
	return false
}

func walkTemplates(outs []Output, f func(string)) {
	for _, o := range outs {
		if o.Cond == nil {
			f(o.Template)
			continue
		}
		for _, c := range o.Cond {
			walkTemplates(c.Outputs, f)
		}
	}
}

type testRule struct {
	re   *regexp2.Regexp
	rule Rule
}

func compileTestRules(t *testing.T, sets []RuleSet) []testRule {
	t.Helper()
	var out []testRule
	for _, s := range sets {
		for _, r := range s.Rules {
			re, err := regexp2.Compile(r.Pattern, regexp2.None)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, testRule{re, r})
		}
	}
	return out
}

// ruleEffect is what the rules do with a line: how many match, and the
// templates of the rules that match, with the groups substituted and the
// macros left as they are, sorted and without duplicates (the conditions
// that choose among them are compared by TestBundledASPTransitions).
func ruleEffect(t *testing.T, rules []testRule, line string) (n int, effect string) {
	var effects []string
	for _, r := range rules {
		m, err := r.re.FindStringMatch(line)
		if err != nil {
			t.Fatal(err)
		}
		if m == nil {
			continue
		}
		n++
		set := map[string]bool{}
		walkTemplates(r.rule.Outputs, func(tpl string) {
			for _, g := range m.Groups() {
				tpl = strings.ReplaceAll(tpl, "${"+g.Name+"}", g.String())
			}
			set[tpl] = true
		})
		var l []string
		for k := range set {
			l = append(l, k)
		}
		sort.Strings(l)
		effects = append(effects, strings.Join(l, " | "))
	}
	return n, strings.Join(effects, " ## ")
}

// TestBundledASPLikeTLV: on every line of TLV's ASP sample logs, the
// bundled "asp" rules match where TLV's asp.cnv does (one rule each),
// capture the same text and output the same templates; where TLV's rules
// match nothing, the bundled ones output nothing ("dispatch from task" is
// recognised, with no output).
func TestBundledASPLikeTLV(t *testing.T) {
	real, err := LoadRules(toppersFile(t, "__convertRules__asp.cnv"))
	if err != nil {
		t.Fatal(err)
	}
	bundledSets, _ := BundledRuleSets()
	tlvRules := compileTestRules(t, real)
	ourRules := compileTestRules(t, bundledSets[:1])
	matched := 0
	for _, f := range toppersGlob(t, "*.log") {
		if strings.Contains(f, "standard_format") || strings.Contains(f, "visualizeScript") || strings.Contains(f, "XMLver") {
			continue // not kernel logs
		}
		fh, err := os.Open(f)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(fh)
		for ln := 1; sc.Scan(); ln++ {
			line := strings.TrimRight(sc.Text(), "\r")
			n1, e1 := ruleEffect(t, tlvRules, line)
			n2, e2 := ruleEffect(t, ourRules, line)
			if n1 > 1 || n2 > 1 || e1 != e2 {
				t.Errorf("%s:%d: %q\nTLV     (%d) %s\nbundled (%d) %s", filepath.Base(f), ln, line, n1, e1, n2, e2)
			}
			if n1 == 1 {
				matched++
			}
		}
		fh.Close()
	}
	if matched < 10000 {
		t.Errorf("only %d lines matched", matched)
	}
}

// TestBundledASPTransitions: for every pair of task states, the bundled
// "task N becomes S" rule outputs the behaviors TLV's rule outputs.
func TestBundledASPTransitions(t *testing.T) {
	real, err := LoadRules(toppersFile(t, "__convertRules__asp.cnv"))
	if err != nil {
		t.Fatal(err)
	}
	bundledSets, _ := BundledRuleSets()
	find := func(sets []RuleSet) Rule {
		for _, r := range sets[0].Rules {
			if strings.Contains(r.Pattern, " becomes ") {
				return r
			}
		}
		t.Fatal("no becomes rule")
		return Rule{}
	}
	fired := func(r Rule, old, new string) string {
		var out []string
		for _, o := range r.Outputs {
			for _, c := range o.Cond {
				cond := strings.ReplaceAll(c.Condition, "$ATTR{Task(id==${id}).state}", old)
				cond = strings.ReplaceAll(cond, "${state}", new)
				e, err := ParseExpr(cond, false)
				if err != nil {
					t.Fatalf("%q: %v", cond, err)
				}
				if e.Eval(nil) {
					walkTemplates(c.Outputs, func(s string) { out = append(out, s) })
				}
			}
		}
		return strings.Join(out, " ")
	}
	tlv, ours := find(real), find(bundledSets)
	states := []string{"DORMANT", "RUNNABLE", "RUNNING", "WAITING", "SUSPENDED", "WAITING-SUSPENDED"}
	n := 0
	for _, old := range states {
		for _, new := range states {
			a, b := fired(tlv, old, new), fired(ours, old, new)
			if a != b {
				t.Errorf("%s → %s: TLV %q, bundled %q", old, new, a, b)
			}
			if a != "" {
				n++
			}
		}
	}
	if n != 13 {
		t.Errorf("%d transitions with a behavior", n)
	}
}

// TestBundledFMP: every line of an FMP log (the paper's fig. 1 and more)
// is matched by exactly one bundled "fmp" rule, whose group prc is the
// processor the line names; the resource file in TLV's FMP form loads
// with the bundled header and no warning.
func TestBundledFMP(t *testing.T) {
	c, err := Load("testdata/config/fmp.res", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Warnings) != 0 || c.Sources["rules fmp"] != "bundled:fmp.cnv" {
		t.Errorf("warnings %v, sources %v", c.Warnings, c.Sources)
	}
	rules := compileTestRules(t, c.RuleSets)
	data, err := os.ReadFile("testdata/config/fmp.log")
	if err != nil {
		t.Fatal(err)
	}
	prcOf := regexp.MustCompile(`^\[\d+\]:\[(\d+)\]: `)
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var hits []*regexp2.Match
		for _, r := range rules {
			if m, _ := r.re.FindStringMatch(line); m != nil {
				hits = append(hits, m)
			}
		}
		if strings.Contains(line, " is running ") { // application output
			if len(hits) != 0 {
				t.Errorf("%q: matched", line)
			}
			continue
		}
		if len(hits) != 1 {
			t.Errorf("%q: %d rules match", line, len(hits))
			continue
		}
		if g := hits[0].GroupByName("prc"); g == nil || g.String() != prcOf.FindStringSubmatch(line)[1] {
			t.Errorf("%q: prc %v", line, g)
		}
	}
}

// TestRealResourceFilesBundledNoWarnings is part of TestRealResourceFiles
// (nil dirs: the bundled sets).

// ---------------------------------------------------------------------
// Fuzzing the lenient reader

func FuzzJSONC(f *testing.F) {
	for _, s := range []string{
		`{"a":1,"b":[true,null,"x"]}`, "\xEF\xBB\xBF{\"a\":1,}", `{"a":1,,"b":2}`, "/*c*/[1,//x\n2]",
		`{"\[(?<t>\d+)\]":"\u0041\n"}`, `"\ud800"`, "{\r\n\"a\":\t\"b\"\r\n}", `[[[[]]]]`, `{"a":"\`, `{"a" 1}`,
	} {
		f.Add([]byte(s))
	}
	dbtest.AddSeeds(f, 0, "testdata/config/rules/demo.cnv", "testdata/config/demo.resh", "testdata/config/fmp.res", "bundled/asp.cnv")
	f.Fuzz(func(t *testing.T, data []byte) {
		d, err := jcParse("f.json", data)
		if err != nil {
			ce, ok := err.(*ConfigError)
			if !ok {
				t.Fatalf("%T: %v", err, err)
			}
			if ce.Pos.Line < 1 || ce.Pos.Col < 1 || !strings.HasPrefix(ce.Msg, "malformed JSON: ") {
				t.Fatalf("bad error: %#v", ce)
			}
		}
		// Strict JSON reads as encoding/json reads it (a value of the
		// lenient reader, with the last of duplicate keys, as json does).
		if json.Valid(data) {
			if err != nil && strings.Contains(err.Error(), "nested deeper than") {
				return // a bound of ours, not of JSON
			}
			if err != nil {
				t.Fatalf("valid JSON refused: %v", err)
			}
			var want any
			dec := json.NewDecoder(bytes.NewReader(data))
			dec.UseNumber()
			if err := dec.Decode(&want); err != nil {
				t.Fatal(err)
			}
			if got := jcAny(d.Root); !reflect.DeepEqual(got, want) {
				t.Fatalf("got %#v, want %#v", got, want)
			}
			// The same with TLV's habits around it: a BOM, a comment,
			// CRLF line ends, a trailing comma.
			var b bytes.Buffer
			b.WriteString("\xEF\xBB\xBF// TLV\r\n/* x */")
			b.Write(data)
			b.WriteString(",\r\n// end")
			d2, err := jcParse("f.json", b.Bytes())
			if err != nil {
				t.Fatalf("lenient form refused: %v", err)
			}
			if got := jcAny(d2.Root); !reflect.DeepEqual(got, want) {
				t.Fatalf("lenient form: got %#v, want %#v", got, want)
			}
		}
		if err == nil {
			// Every offset of the tree has a place in the file.
			var walk func(v *jcValue)
			walk = func(v *jcValue) {
				if p := d.pos(v.Off, ""); p.Line < 1 || p.Col < 1 || v.Off < 0 || v.Off > len(data) {
					t.Fatalf("offset %d: %+v", v.Off, p)
				}
				for _, m := range v.Members {
					walk(m.Value)
				}
				for _, e := range v.Elems {
					walk(e)
				}
			}
			walk(d.Root)
		}
	})
}

// jcAny turns a parsed value into what encoding/json (UseNumber) decodes.
func jcAny(v *jcValue) any {
	switch v.Kind {
	case jcObject:
		m := map[string]any{}
		for _, mm := range v.Members {
			m[mm.Key] = jcAny(mm.Value)
		}
		return m
	case jcArray:
		a := []any{}
		for _, e := range v.Elems {
			a = append(a, jcAny(e))
		}
		return a
	case jcString:
		return v.Text
	case jcNumber:
		return json.Number(v.Text)
	case jcBool:
		return v.Text == "true"
	}
	return nil
}
