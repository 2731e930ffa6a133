package dtrace

import (
	"fmt"
	"strings"
	"testing"
)

const aggHdr = "           value  ------------- Distribution ------------- count\n"

// aggRow prints a DTrace row with bar '@' of 40.
func aggRow(label string, count int64, bar int) string {
	return fmt.Sprintf("%16s |%-40s %d\n", label, strings.Repeat("@", bar), count)
}

// aggBad are inputs whose aggregations are broken, with the exact error.
var aggBad = []struct{ name, text, err string }{
	{"header, then the end", "^C\n" + aggHdr,
		"t.txt:2: expected a distribution row (VALUE |BAR COUNT) after the header at line 2, found the end of the file"},
	{"header, then prose", "^C\n" + aggHdr + "The output shows\n",
		`t.txt:3: expected a distribution row (VALUE |BAR COUNT) after the header at line 2, found "The output shows"`},
	{"count not a number", aggHdr + "            1024 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@ 12x\n",
		`t.txt:2: expected a count (an integer) after the bar, found "12x"`},
	{"count too large", aggHdr + "            1024 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@ 99999999999999999999\n",
		`t.txt:2: expected a count (an integer) after the bar, found "99999999999999999999"`},
	{"bar longer than 40", aggHdr + "            1024 |" + strings.Repeat("@", 41) + " 5\n",
		"t.txt:2: expected a bar of at most 40 '@', found 41"},
	{"row cut in the bar", aggHdr + aggRow("512", 0, 0) + "            1024 |@@@@@@@@@@\n",
		"t.txt:3: expected a count after the bar, found the end of the line"},
	{"bar too narrow", aggHdr + "            1024 |@@@@ 5\n",
		"t.txt:2: expected a bar 40 characters wide and a blank before the count, found 5 characters"},
	{"two bars", aggHdr + "            1024 |@@@@|                                    5\n",
		"t.txt:2: expected one '|' in the bar, found 2"},
	{"bar away from its pipe", aggHdr + fmt.Sprintf("            1024 |%-40s 5\n", "  @@@@"),
		`t.txt:2: expected the '@' of the bar next to its '|', found "|  @@@@                                  "`},
	{"pipe moved", aggHdr + aggRow("1", 1, 20) + "               2                     @@@@@@@@@@@@@@@@@@@@| -1\n",
		"t.txt:3: expected the '|' of every bar in the same place, found it moved"},
	{"bars inconsistent with counts", aggHdr + aggRow("1", 1, 40) + aggRow("2", 100, 40) + aggRow("4", 0, 0),
		"t.txt:2: expected a bar of 0 '@' for a count of 1 out of 101, found 40"},
	{"bar without count", aggHdr + aggRow("1", 0, 5) + aggRow("2", 10, 40),
		"t.txt:2: expected the bar of count 0 right of the '|', found 0 '@' left of the '|' and 5 right"},
	{"values out of order", aggHdr + aggRow("4", 0, 0) + aggRow("2", 1, 40),
		"t.txt:3: expected bucket values in increasing order, found 2 after 4"},
	{"underflow not first", aggHdr + aggRow("1", 0, 0) + aggRow("< 0", 1, 40),
		"t.txt:3: expected the underflow row (< N) first in the distribution, found it after other rows"},
	{"values of no function", "^C\n  a\n" + aggHdr + aggRow("1", 0, 0) + aggRow("2", 1, 10) + aggRow("4", 1, 10) + aggRow("16", 1, 10) + aggRow("32", 1, 10),
		"t.txt:8: expected the values of consecutive quantize, lquantize or llquantize buckets, found 1, 2, 4, 16, 32"},
	{"underflow before another bucket", aggHdr + aggRow("< 5", 1, 20) + aggRow("7", 1, 20),
		"t.txt:3: expected bucket 5 after the row < 5, found 7"},
	{"width unknown with a count", aggHdr + aggRow("10", 0, 0) + aggRow("20", 0, 0) + aggRow("40", 5, 40),
		"t.txt:4: expected a row after bucket 40 to bound it (the printed values do not give its width), found the end of the distribution"},
	{"key too long", strings.Repeat("  frame\n", maxKeyLines+1) + aggHdr + aggRow("1", 1, 40),
		fmt.Sprintf("t.txt:%d: expected a key of at most %d lines above the distribution, found more", maxKeyLines+2, maxKeyLines)},
	{"bpftrace count not a number", "@x:\n[1]                    x |@@@@|\n",
		`t.txt:2: expected a count (an integer) after bucket [1], found "x |@@@@|"`},
	{"bpftrace bucket", "@x:\n[1, 0)                 1 |@@@@|\n",
		`t.txt:2: expected a bucket [N], [N, M), (..., N) or [N, ...), found "[1, 0)"`},
	{"bpftrace bar", "@x:\n[1]                    1 |@@@@ @|\n",
		`t.txt:2: expected a bar of '@' then blanks between the '|', found "@@@@ @"`},
	{"bpftrace bars of two widths", "@x:\n[1]                    1 |@@@@|\n[2, 4)                 1 |@@@@ |\n",
		"t.txt:3: expected every bar 4 characters wide, found 5"},
	{"bpftrace bars inconsistent", "@x:\n[1]                    1 |@@@@|\n[2, 4)                 4 |@@@@|\n",
		"t.txt:2: expected a bar of 1 '@' for a count of 1 (largest 4), found 4"},
	{"bpftrace key not closed", "@[\n    tcp_sendmsg+1\n",
		"t.txt:1: expected the key opened here to end with a line ']: VALUE', found the end of the file"},
	{"bpftrace key cut by a blank line", "@[\n    tcp_sendmsg+1\n\n",
		"t.txt:3: expected the key opened at line 1 to end with a line ']: VALUE', found a blank line"},
}

func TestAggregationsBad(t *testing.T) {
	for _, tc := range aggBad {
		t.Run(tc.name, func(t *testing.T) {
			_, err := aggRead(t, tc.text, false, ScalarsAuto)
			if err == nil {
				t.Fatalf("no error, want %s", tc.err)
			}
			if err.Error() != tc.err {
				t.Errorf("got  %s\nwant %s", err, tc.err)
			}
		})
	}
}

// TestAggregationsSkipBad: with --skip-bad every bad input becomes an
// error diagnostic at its line, the broken block is not stored (a warning
// says so), and what comes after it is read.
func TestAggregationsSkipBad(t *testing.T) {
	good := "\n  after\n" + aggHdr + aggRow("1", 0, 0) + aggRow("2", 7, 40) + aggRow("4", 0, 0)
	for _, tc := range aggBad {
		t.Run(tc.name, func(t *testing.T) {
			// the error a strict read of the same text stops at
			_, strict := aggRead(t, tc.text+good, false, ScalarsAuto)
			if strict == nil {
				t.Fatal("no error without --skip-bad")
			}
			c, err := aggRead(t, tc.text+good, true, ScalarsAuto)
			if err != nil {
				t.Fatal(err)
			}
			_, msg, _ := strings.Cut(strict.Error(), ": ")
			line := strings.SplitN(strict.Error(), ":", 3)[1]
			found := false
			for _, d := range c.diags {
				if d == line+" error "+msg {
					found = true
				}
			}
			if !found {
				t.Errorf("no diagnostic %q in %q", line+" error "+msg, c.diags)
			}
			var keys []string
			for _, b := range c.buckets {
				if b.label == "2" && b.count == 7 {
					keys = append(keys, b.key)
				}
			}
			if len(keys) != 1 || keys[0] != "after" {
				t.Errorf("the block after the bad one: %q\n%s", keys, c.rowsText())
			}
			for _, b := range c.buckets {
				if b.key != "after" && b.key != "a" && b.agg != "@x" {
					t.Errorf("a row of the bad block was stored: %+v", b)
				}
			}
		})
	}
}
