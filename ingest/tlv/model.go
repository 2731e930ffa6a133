// Package tlv reads traces in the way TraceLogVisualizer (TLV) defined
// them: its standard format of resources, attributes and behaviors
// ([TIME]Resource.attr=value, [TIME]Resource.behavior(args),
// [TIME]Type(condition).attr=value), and any other line-oriented log
// through TLV conversion rules (.cnv) that turn each log line into
// standard-format lines, with resource files (.res) and resource headers
// (.resh) that declare the resources and their types. Source:
// ../shared/seeds/tlv-tracelog-visualizer.ja.txt.
//
// model.go holds what the configuration files say (config.go reads them);
// the standard-format reader, the resource state, conditions and the
// conversion engine work on these types.
package tlv

// Pos is where something stands in a configuration file, for errors:
// FILE:LINE:COL: in rule "KEY": message.
type Pos struct {
	File      string
	Line, Col int
	Key       string // the JSON key (rule pattern, condition, resource name) it belongs to
}

// ResourceFile is a .res file.
type ResourceFile struct {
	Path            string
	TimeScale       string // "s", "ms", "us", "ns", "ps" (TLV also accepts others; see config.go)
	TimeRadix       int    // 10 or 16 (2 and 8 too)
	ConvertRules    []string
	ConvertRulesSet bool // the file has a ConvertRules key (a list of "" only means: no conversion)
	VisualizeRules  []string
	ResourceHeaders []string
	Resources       []Resource // in file order
	// EmbeddedTypes are resource types the file declares itself: the .res
	// TLV saves in a project archive (.tlv) holds its resource headers in
	// place of their names.
	EmbeddedTypes []*ResourceType
}

// Resource is one resource of a .res file.
type Resource struct {
	Name       string
	Type       string
	Attributes []Value // initial values, in file order
	Pos        Pos
}

// Value is a named value as the JSON gives it: Text is its text (numbers
// as written), Kind what JSON type it was.
type Value struct {
	Name string
	Text string
	Kind ValueKind
}

// ValueKind is the JSON type of a Value.
type ValueKind uint8

const (
	KindString ValueKind = iota
	KindNumber
	KindBool
	KindNull
)

// HeaderSet is one named set of resource types of a .resh file (the top
// level key, e.g. "asp").
type HeaderSet struct {
	Name  string
	Types []*ResourceType
}

// ResourceType is a resource type of a resource header.
type ResourceType struct {
	Name        string
	DisplayName string
	Attributes  []AttributeDef
	Behaviors   []BehaviorDef
	// CPU is traceduck's key "CPU" (TLV ignores it): how the resources of
	// the type hold a processor; nil when the header does not say (the
	// defaults by type name of cpu.go apply).
	CPU *CPUDef
	// Waits is traceduck's key "Waits" (TLV ignores it): the calls in
	// which the resources of the type wait for kernel objects; nil when
	// the header does not say (they wait for nothing traceduck sees).
	Waits *WaitsDef
	// Priority is traceduck's key "Priority" (TLV ignores it): the
	// attribute that holds the priority of the resources of the type, and
	// which way it goes; nil when the header does not say (no priorities).
	Priority *PriorityDef
	Pos      Pos
}

// PriorityDef is a resource type's key "Priority" (README.md,
// "Priorities"): the Number attribute whose value is a resource's
// priority, and whether a smaller number is more urgent (Order
// "lower_first": ITRON, TOPPERS) or a larger one ("higher_first").
type PriorityDef struct {
	Attribute  string
	LowerFirst bool
	Pos        Pos
}

// WaitsDef is a resource type's key "Waits" (README.md, "Waits for
// kernel objects"): the service calls in which a resource of the type
// waits for a kernel object, and how the log says it blocked and got it.
type WaitsDef struct {
	// Enter and Leave are the behaviors that begin and end a call: their
	// first argument is the call's name, the second its arguments as the
	// kernel printed them ("semid=2.").
	Enter, Leave string
	// Attribute is the attribute whose values say the resource is
	// blocked ("" for the default, "state"); Blocked are those values.
	Attribute string
	Blocked   []string
	// Granted is the argument of Leave that says the call got its object
	// ("ercd=0"); any other return gave up (a timeout, a forced release).
	Granted string
	// Calls are the calls that wait, in the order the header gives them.
	Calls []WaitCall
	Pos   Pos
}

// WaitCall is a call that waits for a kernel object.
type WaitCall struct {
	Name string // the call (wai_sem)
	// Object is the argument of the call (its name before "=") that
	// numbers the object (semid); Kind is the object's kind (semaphore).
	Object, Kind string
}

// CPUDef is a resource type's key "CPU": what its resources are to the
// processors (README.md, "The CPU model").
type CPUDef struct {
	// Role is "task" (a base holder: it runs, or not), "interrupt" (it
	// nests over what runs), "idle" (every resource of the type is an
	// idle task) or "none" (it never holds a processor).
	Role string
	// Attribute is the attribute whose value says whether a resource
	// runs ("" for the default, "state").
	Attribute string
	// Running are the values of Attribute that mean the resource holds
	// its processor, compared as written (nil: RUNNING or ACTIVE in any
	// case).
	Running []string
	// Processor is the attribute that numbers the processor a resource
	// runs on (FMP's prcId), "" when none.
	Processor string
	// Idle are patterns (globs: * any text, ? one character) of the
	// names of the resources of the type that are idle tasks.
	Idle []string
	Pos  Pos
}

// AttributeDef declares an attribute of a type.
type AttributeDef struct {
	Name           string
	VariableType   string // String, Number, Bool, Time (as TLV writes them)
	DisplayName    string
	AllocationType string // Static (fixed by the resource file) or Dynamic (changed by the trace)
	CanGrouping    bool
	Default        *Value
}

// BehaviorDef declares a behavior of a type and its arguments in order.
type BehaviorDef struct {
	Name        string
	DisplayName string
	Arguments   []ArgumentDef
}

// ArgumentDef is a behavior argument: its name and type.
type ArgumentDef struct {
	Name, Type string
}

// RuleSet is one named set of conversion rules of a .cnv file (the top
// level key, e.g. "asp").
type RuleSet struct {
	Name  string
	Rules []Rule // in file order
	// Style is "" for rules of regular expressions; "script" for a set
	// whose "$STYLE" is "script" (TLV ran an external program instead; it
	// has no rules and Load refuses it).
	Style string
}

// Rule maps a regular expression over a raw log line to outputs.
type Rule struct {
	Pattern string // .NET regular expression syntax
	Outputs []Output
	Pos     Pos
}

// Output is one element of a rule's output: a standard-format line
// template, or a block of conditions each with its outputs.
type Output struct {
	Template string // used when Cond is nil
	Cond     []Case // a conditional block, in file order
	Pos      Pos
}

// Case is one condition of a conditional block and what it outputs when
// it holds.
type Case struct {
	Condition string
	Outputs   []Output
	Pos       Pos
}
