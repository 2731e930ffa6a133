package tlv

import (
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// TestReadSGRReal: TLV's own statistics generation rule files. The task
// dispatch count is a Basic Count of each Task's changes of state to
// RUNNING; the CPU utilization runs a Ruby script and is refused at its
// Mode, saying why.
func TestReadSGRReal(t *testing.T) {
	rules, err := ReadSGRFile(externalFile(t, "statisticsGenerationRules__task_dispatch_count.sgr"))
	if err != nil {
		t.Fatal(err)
	}
	if len(rules) != 1 {
		t.Fatalf("%d rules", len(rules))
	}
	r := rules[0]
	want := &StatEvent{Types: []string{"Task"}, Attribute: "state", Value: "RUNNING"}
	r.When.Pos = Pos{}
	if r.Name != "task_dispatch_count" || r.Title != "タスクのディスパッチ回数" || r.Method != "Count" || r.Interval != 0 ||
		!reflect.DeepEqual(r.When, want) || r.From != nil || r.To != nil || r.Pos.Line != 2 {
		t.Errorf("rule %+v, When %+v", r, r.When)
	}

	p := externalFile(t, "statisticsGenerationRules__asp_cpu_utilization.sgr")
	_, err = ReadSGRFile(p)
	if err == nil || err.Error() != p+`:10:10: in statistic "asp_cpu_utilization": Mode: expected Basic, found "Script": the statistic is what an external program (ScriptExtension) prints; traceduck runs no program: not supported` {
		t.Errorf("err = %v", err)
	}
}

// TestReadSGR: what a Basic rule may say, and the rules TLV refused or
// traceduck cannot compute, each refused at its place.
func TestReadSGR(t *testing.T) {
	r, err := ReadSGR("a.sgr", []byte(`{
 "a": {"Mode": "Basic", "BasicRule": {"Method": "Measure",
   "From": {"ResourceName": "T1", "BehaviorName": "enterSVC", "BehaviorArg": "dly_tsk, f(a, b)"},
   "To": {"ResourceName": ["T1", "T2"], "BehaviorName": "leaveSVC"}}},
 "b": {"Mode": "Basic", "BasicRule": {"Method": "Count", "Interval": 1000,
   "When": {"ResourceType": "Task", "AttributeName": "state", "AttributeValue": "RUNNING"}}}
}`))
	if err != nil {
		t.Fatal(err)
	}
	if len(r) != 2 || !reflect.DeepEqual(r[0].From.Args, []string{"dly_tsk", "f(a, b)"}) || !r[0].From.HasArgs || r[0].To.HasArgs ||
		!reflect.DeepEqual(r[0].To.Names, []string{"T1", "T2"}) || r[1].Interval != 1000 || !reflect.DeepEqual(r[1].When.Types, []string{"Task"}) {
		t.Errorf("%+v %+v %+v", r[0], r[0].From, r[0].To)
	}
	for _, c := range []struct{ in, want string }{
		{`{"s": {"Mode": "Regexp", "RegexpRule": {}}}`, `b.sgr:1:16: in statistic "s": Mode: expected Basic, found "Regexp": data points read from the lines of a log by regular expressions; the database keeps events, not lines: not supported`},
		{`{"s": {"Mode": "Input"}}`, `b.sgr:1:16: in statistic "s": Mode: expected Basic, found "Input": the statistic is given as data, there is nothing to compute: not supported`},
		{`{"s": {"Mode": "Fancy"}}`, `b.sgr:1:16: in statistic "s": Mode: expected Basic, Regexp, Script or Input, found "Fancy"`},
		{`{"s": {"Setting": {}}}`, `b.sgr:1:7: in statistic "s": expected a Mode (Basic, Regexp, Script or Input), found none`},
		{`{"s": {"Mode": "Basic"}}`, `b.sgr:1:16: in statistic "s": Mode Basic: expected a BasicRule, found none`},
		{"{\"s\": {\"Mode\": \"Basic\", \"BasicRule\": {\"Method\": \"Sum\"}}}", `b.sgr:1:49: in statistic "s": Method: expected Count or Measure, found "Sum"`},
		{"{\"s\": {\"Mode\": \"Basic\", \"BasicRule\": {\"Method\": \"Count\",\n \"From\": {\"ResourceName\": \"A\", \"BehaviorName\": \"b\"}, \"To\": {\"ResourceName\": \"A\", \"BehaviorName\": \"c\"}}}}",
			`b.sgr:1:49: in statistic "s": Method: expected Measure with From and To (TLV counts only with When), found Count`},
		{"{\"s\": {\"Mode\": \"Basic\", \"BasicRule\": {\"Method\": \"Count\"}}}", `b.sgr:1:38: in statistic "s": BasicRule: expected When, or From and To, found neither`},
		{"{\"s\": {\"Mode\": \"Basic\", \"BasicRule\": {\"Method\": \"Count\",\n \"When\": {\"AttributeName\": \"state\", \"AttributeValue\": \"X\"}}}}", `b.sgr:2:10: in statistic "s": When: expected ResourceName or ResourceType, found neither`},
		{"{\"s\": {\"Mode\": \"Basic\", \"BasicRule\": {\"Method\": \"Count\",\n \"When\": {\"ResourceType\": \"Task\", \"AttributeName\": \"state\"}}}}", `b.sgr:2:10: in statistic "s": When: expected AttributeName and AttributeValue, or BehaviorName, found neither`},
		{"{\"s\": {\"Mode\": \"Basic\", \"BasicRule\": {\"Method\": \"Measure\", \"Interval\": 5,\n \"When\": {\"ResourceType\": \"Task\", \"BehaviorName\": \"b\"}}}}", `b.sgr:1:49: in statistic "s": Interval: TLV uses it only with Count and When, found Measure`},
		{"{\"s\": {\"Mode\": \"Basic\", \"BasicRule\": {\"Method\": \"Count\", \"Every\": 5}}}", `b.sgr:1:58: in statistic "s": BasicRule: expected Method, Interval, When, From or To, found "Every"`},
		{`[]`, `b.sgr:1:1: expected an object of statistics, found a list`},
	} {
		_, err := ReadSGR("b.sgr", []byte(c.in))
		if err == nil || err.Error() != c.want {
			t.Errorf("%s:\n got %v\nwant %s", c.in, err, c.want)
		}
	}
	if _, err := ReadSGRFile(filepath.Join(t.TempDir(), "none.sgr")); err == nil || !strings.Contains(err.Error(), "none.sgr") {
		t.Errorf("missing file: %v", err)
	}
}
