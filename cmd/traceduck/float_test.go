package main

import (
	"math"
	"testing"
)

func TestFormatFloat(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		f    float64
		want string
	}{
		{3.9985726e+07, "39985726"}, {2.5, "2.5"}, {0, "0"}, {-1234.5, "-1234.5"},
		{1e20, "1e+20"}, {1.5e-7, "1.5e-07"}, {math.NaN(), "nan"}, {math.Inf(-1), "-inf"},
	} {
		if got := formatFloat(tc.f, 64); got != tc.want {
			t.Errorf("%v: got %s want %s", tc.f, got, tc.want)
		}
	}
}
