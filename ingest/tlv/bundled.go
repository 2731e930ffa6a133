package tlv

// bundled.go embeds traceduck's own conversion rules and resource headers
// for the TOPPERS kernels (bundled/): set "asp" for TOPPERS/ASP logs
// ([TIME] message) and set "fmp" for TOPPERS/FMP logs ([TIME]:[PRC]:
// message). They carry the names TLV's own files use, so that a resource
// file written for TLV ("ConvertRules": ["asp"], "ResourceHeaders":
// ["fmp"]) finds them when the user gives no rules of their own.

import (
	"embed"
	"io/fs"
	"path"
	"sort"
	"strings"
	"sync"
)

//go:embed bundled/*.cnv bundled/*.resh
var bundledFiles embed.FS

// BundledFS returns the bundled rule and header files (asp.cnv, asp.resh,
// fmp.cnv, fmp.resh), for `traceduck` to show or copy.
func BundledFS() fs.FS {
	sub, err := fs.Sub(bundledFiles, "bundled")
	if err != nil {
		panic(err)
	}
	return sub
}

type bundledSets struct {
	rules      []RuleSet
	ruleFile   map[string]string // set name → file
	headers    []HeaderSet
	headerFile map[string]string
	err        error
}

var (
	bundledOnce sync.Once
	bundled     bundledSets
)

// loadBundled parses the bundled files once. They are part of the binary:
// an error in them is a bug, which the tests catch.
func loadBundled() *bundledSets {
	bundledOnce.Do(func() {
		b := &bundled
		b.ruleFile = map[string]string{}
		b.headerFile = map[string]string{}
		ents, err := fs.ReadDir(bundledFiles, "bundled")
		if err != nil {
			b.err = err
			return
		}
		names := make([]string, 0, len(ents))
		for _, e := range ents {
			names = append(names, e.Name())
		}
		sort.Strings(names)
		for _, n := range names {
			data, err := bundledFiles.ReadFile(path.Join("bundled", n))
			if err != nil {
				b.err = err
				return
			}
			switch {
			case strings.HasSuffix(n, ".cnv"):
				sets, err := ParseRules("bundled:"+n, data)
				if err != nil {
					b.err = err
					return
				}
				for _, s := range sets {
					b.rules = append(b.rules, s)
					b.ruleFile[s.Name] = n
				}
			case strings.HasSuffix(n, ".resh"):
				sets, err := ParseHeaders("bundled:"+n, data)
				if err != nil {
					b.err = err
					return
				}
				for _, s := range sets {
					b.headers = append(b.headers, s)
					b.headerFile[s.Name] = n
				}
			}
		}
	})
	return &bundled
}

// BundledRuleSets returns the bundled rule sets ("asp", "fmp").
func BundledRuleSets() ([]RuleSet, error) {
	b := loadBundled()
	return b.rules, b.err
}

// BundledHeaderSets returns the bundled header sets ("asp", "fmp").
func BundledHeaderSets() ([]HeaderSet, error) {
	b := loadBundled()
	return b.headers, b.err
}

// bundledRuleSet returns a bundled rule set (a copy) and its file, or nil.
func bundledRuleSet(name string) (*RuleSet, string) {
	b := loadBundled()
	for i := range b.rules {
		if b.rules[i].Name == name {
			s := b.rules[i]
			return &s, b.ruleFile[name]
		}
	}
	return nil, ""
}

// bundledHeaderSet returns a bundled header set and its file, or nil.
func bundledHeaderSet(name string) (*HeaderSet, string) {
	b := loadBundled()
	for i := range b.headers {
		if b.headers[i].Name == name {
			s := b.headers[i]
			return &s, b.headerFile[name]
		}
	}
	return nil, ""
}

func bundledRuleNames() []string {
	var n []string
	for _, s := range loadBundled().rules {
		n = append(n, s.Name)
	}
	return n
}

func bundledHeaderNames() []string {
	var n []string
	for _, s := range loadBundled().headers {
		n = append(n, s.Name)
	}
	return n
}
