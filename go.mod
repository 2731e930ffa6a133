module github.com/traceduck/traceduck

go 1.22

require (
	github.com/apache/arrow/go/v17 v17.0.0
	github.com/marcboeker/go-duckdb v1.8.2
	github.com/rivo/uniseg v0.4.7
	github.com/schollz/progressbar/v3 v3.14.6
	github.com/spf13/cobra v1.10.2
	golang.org/x/term v0.22.0
	golang.org/x/tools v0.22.0
)

require (
	github.com/dlclark/regexp2 v1.12.0
	github.com/goccy/go-json v0.10.3 // indirect
	github.com/google/flatbuffers v24.3.25+incompatible // indirect
	github.com/inconshreveable/mousetrap v1.1.0 // indirect
	github.com/klauspost/compress v1.17.9 // indirect
	github.com/klauspost/cpuid/v2 v2.2.8 // indirect
	github.com/mitchellh/colorstring v0.0.0-20190213212951-d06e56a500db // indirect
	github.com/mitchellh/mapstructure v1.5.0 // indirect
	github.com/pierrec/lz4/v4 v4.1.21 // indirect
	github.com/spf13/pflag v1.0.9 // indirect
	github.com/tailscale/hujson v0.0.0-20221223112325-20486734a56a
	github.com/zeebo/xxh3 v1.0.2 // indirect
	golang.org/x/exp v0.0.0-20240222234643-814bf88cf225 // indirect
	golang.org/x/mod v0.18.0 // indirect
	golang.org/x/sync v0.7.0 // indirect
	golang.org/x/sys v0.22.0 // indirect
	golang.org/x/xerrors v0.0.0-20231012003039-104605ab7028 // indirect
)
