package schema

import (
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/tools/txtar"
)

// runScriptCases runs the txtar cases matching pattern, the script tests
// of the trackers beside the RunWriter (cpus, resources, messages): each
// case's section "script" goes to run, and every section of sections the
// case has must equal what run returned under that name (a missing one
// fails the case when required, else is not checked).
func runScriptCases(t *testing.T, pattern string, sections []string, required bool, run func(t *testing.T, script string) map[string]string) {
	t.Helper()
	files, _ := filepath.Glob(pattern)
	if len(files) == 0 {
		t.Fatal("no test cases")
	}
	for _, f := range files {
		t.Run(strings.TrimSuffix(filepath.Base(f), ".txtar"), func(t *testing.T) {
			ar, err := txtar.ParseFile(f)
			if err != nil {
				t.Fatal(err)
			}
			sec := map[string]string{}
			for _, fl := range ar.Files {
				sec[fl.Name] = string(fl.Data)
			}
			got := run(t, sec["script"])
			for _, name := range sections {
				want, ok := sec[name]
				if !ok {
					if required {
						t.Fatalf("no section %s", name)
					}
					continue
				}
				if g := got[name]; strings.TrimSpace(g) != strings.TrimSpace(want) {
					t.Errorf("%s:\n--- got\n%s\n--- want\n%s", name, g, want)
				}
			}
		})
	}
}
