package baget

import (
	"embed"
	"fmt"
)

//go:embed examples/*.xml
var examples embed.FS

// Example returns a bundled description by file name (e.g. "minirtos.xml"),
// parsed.
func Example(name string) (*Description, error) {
	data, err := examples.ReadFile("examples/" + name)
	if err != nil {
		return nil, fmt.Errorf("no bundled description %q", name)
	}
	return Parse("examples/"+name, data)
}
