package main

import (
	"errors"
	"testing"
)

// FuzzHistFlags reads arbitrary --lquantize, --llquantize and --buckets
// values: never a panic; a value is either refused as a usage error or
// gives parameters that DTrace's checks accept.
func FuzzHistFlags(f *testing.F) {
	for _, s := range []string{"0,100,10", "0,100", "10,0,6,20", "0,10us,100us,1ms", "1.5ms", "-5,0", "9223372036854775807s", ",", "0,1µs"} {
		f.Add(s, "ns")
		f.Add(s, "us")
	}
	f.Fuzz(func(t *testing.T, v, unit string) {
		if _, ok := unitNS[unit]; !ok {
			unit = "ns"
		}
		for _, flag := range []string{"lquantize", "llquantize", "buckets"} {
			a := histArgs{lquantize: v, llquantize: v, buckets: v, unit: unit}
			spec, err := histSpec(a, func(name string) bool { return name == flag })
			var ue *usageError
			if err != nil {
				if !errors.As(err, &ue) {
					t.Fatalf("--%s %q: %v is not a usage error", flag, v, err)
				}
				continue
			}
			if err := spec.Check(); err != nil {
				t.Fatalf("--%s %q accepted, but %v", flag, v, err)
			}
		}
	})
}
