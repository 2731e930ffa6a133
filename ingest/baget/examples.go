package baget

import (
	"embed"
	"fmt"
)

//go:embed examples/*.xml
var examples embed.FS

// ExampleXML returns the text of a bundled description by file name
// (e.g. "minirtos.xml"), for tools that adapt it (the trace generator).
func ExampleXML(name string) ([]byte, error) {
	data, err := examples.ReadFile("examples/" + name)
	if err != nil {
		return nil, fmt.Errorf("no bundled description %q", name)
	}
	return data, nil
}

// Example returns a bundled description by file name (e.g. "minirtos.xml"),
// parsed.
func Example(name string) (*Description, error) {
	data, err := ExampleXML(name)
	if err != nil {
		return nil, err
	}
	return Parse("examples/"+name, data)
}

// ExampleNames lists the bundled descriptions' file names.
func ExampleNames() []string {
	ents, _ := examples.ReadDir("examples")
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	return names
}
