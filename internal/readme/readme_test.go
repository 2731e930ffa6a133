package readme

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// blockLimit bounds one command block; the whole README runs in well
// under a minute on a loaded 2-core machine.
const blockLimit = 3 * time.Minute

// TestREADME runs every command block of README.md, in order, in a fresh
// directory holding a copy of the repository (what a user has at the
// root of a fresh clone, with nothing the examples wrote), and compares
// each shown output with the real one (the conventions are in readme.go).
// `go build -o OUT ./PKG` and `go run ./PKG ARGS` run programs built once
// from this checkout, so that the blocks do not each link DuckDB.
func TestREADME(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the README's blocks take a minute or two")
	}
	root := moduleRoot(t)
	md, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	blocks, err := Parse(md)
	if err != nil {
		t.Fatal(err)
	}
	var cmds []*Block
	for _, b := range blocks {
		if b.Kind == Command {
			cmds = append(cmds, b)
		}
	}
	if len(cmds) < 20 {
		t.Fatalf("README.md has %d command blocks: the parser lost some", len(cmds))
	}

	bin := t.TempDir()
	goShim(t, bin)
	buildPackages(t, root, bin, cmds)
	work := t.TempDir()
	copied := copyRepository(t, root, work)

	var ran, compared, elisions int
	var skipped []string
	start := time.Now()
	for _, b := range cmds {
		if b.Skip != "" {
			skipped = append(skipped, fmt.Sprintf("README.md:%d (%s): %s", b.Line, firstLine(b.Text), b.Skip))
			continue
		}
		ran++
		t0 := time.Now()
		res := runBlock(t, work, bin, b)
		what := "exit 0"
		switch {
		case res.err != nil:
			t.Errorf("README.md:%d: %v\n%s\noutput:\n%s%s", b.Line, res.err, b.Text, res.combined, res.stderr)
			continue
		case b.Want != nil:
			compared++
			if err := Match(b.Want.Text, res.combined); err != nil {
				t.Errorf("README.md:%d: the output shown at README.md:%d is not what the commands print: %v\ncommands:\n%s", b.Line, b.Want.Line, err, b.Text)
				continue
			}
			if n := Elisions(b.Want.Text); n > 0 {
				elisions += n
				what = fmt.Sprintf("output matches, %d elision(s)", n)
			} else {
				what = "output matches"
			}
		case res.stderr != "":
			t.Errorf("README.md:%d: a block without output shown printed on standard error (an example that says nothing went wrong should not):\n%s\n%s", b.Line, b.Text, res.stderr)
			continue
		}
		t.Logf("README.md:%d: %s (%s, %.1fs)", b.Line, what, firstLine(b.Text), time.Since(t0).Seconds())
	}
	t.Logf("%d command blocks: %d run (%d with their output compared, %d elisions), %d skipped, in %.0fs",
		len(cmds), ran, compared, elisions, len(skipped), time.Since(start).Seconds())
	for _, s := range skipped {
		t.Logf("skipped %s", s)
	}
	checkIgnored(t, root, work, copied)
}

// checkIgnored: what the blocks wrote at the root of the repository is
// named by .gitignore, so that a user who follows the README does not
// commit it.
func checkIgnored(t *testing.T, root, work string, copied map[string]bool) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Log("no git: what the blocks wrote is not checked against .gitignore")
		return
	}
	entries, err := os.ReadDir(work)
	if err != nil {
		t.Fatal(err)
	}
	var wrote []string
	for _, e := range entries {
		if !copied[e.Name()] {
			name := e.Name()
			if e.IsDir() {
				name += "/" // for the patterns of directories
			}
			wrote = append(wrote, name)
		}
	}
	for _, name := range wrote {
		cmd := exec.Command("git", "check-ignore", "-q", "--no-index", name)
		cmd.Dir = root
		if err := cmd.Run(); err != nil {
			var ee *exec.ExitError
			if errors.As(err, &ee) && ee.ExitCode() == 1 {
				t.Errorf("the README's blocks write %s at the repository root, which .gitignore does not name", name)
				continue
			}
			t.Logf("git check-ignore %s: %v: what the blocks wrote is not checked against .gitignore", name, err)
			return
		}
	}
	t.Logf("the blocks wrote at the root, all in .gitignore: %s", strings.Join(wrote, " "))
}

// blockResult is what a command block did: its standard output and error
// interleaved as a terminal shows them (when an output is shown), or its
// standard error alone.
type blockResult struct {
	combined, stderr string
	err              error
}

func runBlock(t *testing.T, work, bin string, b *Block) blockResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), blockLimit)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "--noprofile", "--norc", "-e", "-o", "pipefail", "-c", b.Text)
	cmd.Dir = work
	cmd.Env = blockEnv(bin)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	var out, errb bytes.Buffer
	if b.Want != nil {
		// one pipe for both, so that the lines keep their order
		w := &syncWriter{w: &out}
		cmd.Stdout, cmd.Stderr = w, w
	} else {
		cmd.Stdout, cmd.Stderr = &out, &errb
	}
	err := cmd.Run()
	var res blockResult
	res.combined, res.stderr = out.String(), errb.String()
	if ctx.Err() != nil {
		res.err = fmt.Errorf("did not end within %v (killed)", blockLimit)
	} else if err != nil {
		res.err = fmt.Errorf("failed: %v", err)
	}
	return res
}

// syncWriter is one writer for a command's standard output and error:
// exec.Cmd gives the command one pipe when both are the same writer.
type syncWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}

// blockEnv is the environment of a command block: the test's, with the
// go shim first on PATH and without traceduck's test hooks.
func blockEnv(bin string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "TRACEDUCK_TEST_") || strings.HasPrefix(kv, "PATH=") {
			continue
		}
		env = append(env, kv)
	}
	return append(env, "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"), "READMETEST_BIN="+bin)
}

// goPackage finds the packages the blocks build or run.
var goPackage = regexp.MustCompile(`(?m)\bgo (?:run|build -o \S+) (\./[\w./-]+)`)

// exeName is the name of a package's program in the bin directory (the
// go shim computes the same).
func exeName(pkg string) string {
	return "pkg_" + strings.ReplaceAll(strings.Trim(strings.TrimPrefix(pkg, "./"), "/"), "/", "_")
}

// buildPackages builds every package the command blocks build or run,
// at once, from the checkout.
func buildPackages(t *testing.T, root, bin string, cmds []*Block) {
	t.Helper()
	seen := map[string]bool{}
	var pkgs []string
	for _, b := range cmds {
		if b.Skip != "" {
			continue
		}
		for _, m := range goPackage.FindAllStringSubmatch(b.Text, -1) {
			if !seen[m[1]] {
				seen[m[1]] = true
				pkgs = append(pkgs, m[1])
			}
		}
	}
	sort.Strings(pkgs)
	t0 := time.Now()
	errs := make([]error, len(pkgs))
	var wg sync.WaitGroup
	for i, p := range pkgs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cmd := exec.Command("go", "build", "-o", filepath.Join(bin, exeName(p)), p)
			cmd.Dir = root
			if out, err := cmd.CombinedOutput(); err != nil {
				errs[i] = fmt.Errorf("go build %s: %v\n%s", p, err, out)
			}
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	t.Logf("built %s in %.0fs", strings.Join(pkgs, ", "), time.Since(t0).Seconds())
}

// goShim writes the go that the command blocks call: `go build -o OUT
// ./PKG` copies the program built from the checkout, `go run ./PKG ARGS`
// runs it in the block's directory; anything else is refused, as a block
// to mark skip.
func goShim(t *testing.T, bin string) {
	t.Helper()
	const shim = `#!/bin/sh
# go as README.md's command blocks call it (internal/readme/readme_test.go).
name() { printf 'pkg_%s' "$(printf '%s' "$1" | sed 's|^\./||; s|/*$||; s|/|_|g')"; }
if [ "$1" = build ] && [ "$2" = -o ] && [ $# -eq 4 ] && [ -x "$READMETEST_BIN/$(name "$4")" ]; then
	exec cp "$READMETEST_BIN/$(name "$4")" "$3"
fi
if [ "$1" = run ] && [ $# -ge 2 ] && [ -x "$READMETEST_BIN/$(name "$2")" ]; then
	exe="$READMETEST_BIN/$(name "$2")"
	shift 2
	exec "$exe" "$@"
fi
echo "README test: go $*: only 'go build -o OUT ./PKG' and 'go run ./PKG ARGS' are run; mark the block <!-- readme-test: skip (REASON) -->" >&2
exit 127
`
	if err := os.WriteFile(filepath.Join(bin, "go"), []byte(shim), 0o755); err != nil {
		t.Fatal(err)
	}
}

// copyRepository copies the repository's files (tracked, or new and not
// ignored) into dir: the root of a fresh clone. Without git, every file
// but .git and the databases. It returns the names it made at the root.
func copyRepository(t *testing.T, root, dir string) map[string]bool {
	t.Helper()
	var files []string
	cmd := exec.Command("git", "ls-files", "-z", "--cached", "--others", "--exclude-standard")
	cmd.Dir = root
	if out, err := cmd.Output(); err == nil {
		for _, f := range strings.Split(string(out), "\x00") {
			if f != "" {
				files = append(files, f)
			}
		}
	} else {
		err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() && d.Name() == ".git" {
				return filepath.SkipDir
			}
			if d.Type().IsRegular() && !strings.Contains(d.Name(), ".duckdb") {
				rel, _ := filepath.Rel(root, p)
				files = append(files, rel)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	top := map[string]bool{}
	for _, f := range files {
		top[strings.SplitN(filepath.ToSlash(f), "/", 2)[0]] = true
		src := filepath.Join(root, f)
		fi, err := os.Lstat(src)
		if err != nil || !fi.Mode().IsRegular() { // deleted in the worktree, a link
			continue
		}
		data, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		dst := filepath.Join(dir, f)
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(dst, data, fi.Mode().Perm()); err != nil {
			t.Fatal(err)
		}
	}
	return top
}

func moduleRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		up := filepath.Dir(dir)
		if up == dir {
			t.Fatal("no go.mod above the working directory")
		}
		dir = up
	}
}

func firstLine(s string) string {
	l, _, _ := strings.Cut(s, "\n")
	if len(l) > 60 {
		l = l[:57] + "..."
	}
	return l
}
