package main

import (
	"context"
	"database/sql"
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"
)

// versionLine is what traceduck --version and traceduck version print:
// traceduck's version (the module's, else the git commit it was built
// from, else devel), the Go that built it and the DuckDB it embeds.
func versionLine(ctx context.Context) string {
	v := "devel"
	if bi, ok := debug.ReadBuildInfo(); ok {
		if bi.Main.Version != "" && bi.Main.Version != "(devel)" {
			v = bi.Main.Version
		} else {
			var rev, modified string
			for _, s := range bi.Settings {
				switch s.Key {
				case "vcs.revision":
					rev = s.Value
				case "vcs.modified":
					modified = s.Value
				}
			}
			if rev != "" {
				v = "devel (commit " + rev[:min(len(rev), 12)]
				if modified == "true" {
					v += ", modified"
				}
				v += ")"
			}
		}
	}
	return fmt.Sprintf("traceduck %s, %s %s/%s, DuckDB %s", v, runtime.Version(), runtime.GOOS, runtime.GOARCH, duckDBVersion(ctx))
}

// duckDBVersion asks the embedded DuckDB for its version.
func duckDBVersion(ctx context.Context) string {
	db, err := sql.Open("duckdb", "")
	if err != nil {
		return "unknown (" + err.Error() + ")"
	}
	defer db.Close()
	var v string
	if err := db.QueryRowContext(ctx, "SELECT version()").Scan(&v); err != nil {
		return "unknown (" + err.Error() + ")"
	}
	return v
}

func newVersionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print traceduck's version, the Go version and the DuckDB version",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			fmt.Fprintln(cmd.OutOrStdout(), versionLine(cmd.Context()))
			return nil
		},
	}
}
