package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"
)

// addDBFlag adds the --db flag every command that touches a database has.
func addDBFlag(cmd *cobra.Command, p *string, required bool, usage string) {
	cmd.Flags().StringVar(p, "db", "", usage)
	if required {
		_ = cmd.MarkFlagRequired("db")
	}
}

// tagsValue is the repeatable --tag k=v flag. A value without '=' or with
// an empty key is refused when the flag is parsed (a usage error).
type tagsValue struct{ tags *[][2]string }

func (v tagsValue) String() string {
	if v.tags == nil {
		return ""
	}
	var parts []string
	for _, t := range *v.tags {
		parts = append(parts, t[0]+"="+t[1])
	}
	return strings.Join(parts, ",")
}

func (v tagsValue) Set(s string) error {
	k, val, ok := strings.Cut(s, "=")
	k = strings.TrimSpace(k)
	if !ok || k == "" {
		return fmt.Errorf("%q is not key=value", s)
	}
	for _, t := range *v.tags {
		if t[0] == k {
			return fmt.Errorf("tag %q given twice", k)
		}
	}
	*v.tags = append(*v.tags, [2]string{k, val})
	return nil
}

func (v tagsValue) Type() string { return "key=value" }

// enumValue is a flag that takes one of a fixed set of words.
type enumValue struct {
	value   *string
	allowed []string
}

func (v enumValue) String() string { return *v.value }

func (v enumValue) Set(s string) error {
	for _, a := range v.allowed {
		if s == a {
			*v.value = s
			return nil
		}
	}
	return fmt.Errorf("%q is not one of %s", s, strings.Join(v.allowed, ", "))
}

func (v enumValue) Type() string { return strings.Join(v.allowed, "|") }

// addRunFlag adds --run N: only the run with run_id N; 0 (the default)
// means every run.
func addRunFlag(cmd *cobra.Command, p *int32) {
	cmd.Flags().Int32Var(p, "run", 0, "only the run with this run_id (see 'SELECT run_id, name FROM runs'); default every run")
}
