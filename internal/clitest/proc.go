package clitest

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Proc is a traceduck running in the background.
type Proc struct {
	t       testing.TB
	cmd     *exec.Cmd
	stopped chan struct{} // closed when it printed "stopped at"
	done    chan struct{} // closed when it has exited
	mu      sync.Mutex
	stdout  strings.Builder
	stderr  strings.Builder
	res     Result
}

// Start starts traceduck with args in dir, standard input read from
// stdin (nil: none); stop, when not empty, is the StopEnv point where it
// waits (cmd/traceduck/teststop.go).
func Start(t testing.TB, dir, stop string, stdin io.Reader, args ...string) *Proc {
	t.Helper()
	p := &Proc{t: t, stopped: make(chan struct{}), done: make(chan struct{})}
	p.cmd = exec.Command(Binary, args...)
	p.cmd.Dir = dir
	p.cmd.Stdin = stdin
	p.cmd.Env = append(os.Environ(), StopEnv+"="+stop)
	p.cmd.Stdout = &lockedWriter{&p.mu, &p.stdout}
	errPipe, err := p.cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		sc := bufio.NewScanner(errPipe)
		once := sync.Once{}
		for sc.Scan() {
			p.mu.Lock()
			p.stderr.WriteString(sc.Text() + "\n")
			p.mu.Unlock()
			if strings.HasPrefix(sc.Text(), "traceduck: stopped at "+stop) && stop != "" {
				once.Do(func() { close(p.stopped) })
			}
		}
		err := p.cmd.Wait()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			code = -1
		}
		p.mu.Lock()
		p.res = Result{p.stdout.String(), p.stderr.String(), code}
		p.mu.Unlock()
		close(p.done)
	}()
	return p
}

type lockedWriter struct {
	mu *sync.Mutex
	b  *strings.Builder
}

func (w *lockedWriter) Write(b []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(b)
}

// Pid is the process's id.
func (p *Proc) Pid() int { return p.cmd.Process.Pid }

// Signal sends sig to the process.
func (p *Proc) Signal(sig os.Signal) error { return p.cmd.Process.Signal(sig) }

// Done is closed when the process has exited.
func (p *Proc) Done() <-chan struct{} { return p.done }

// Stopped is closed when the process has stopped at its StopEnv point.
func (p *Proc) Stopped() <-chan struct{} { return p.stopped }

// WaitFor polls cond until it holds; the process ending first fails the
// test (the point to act at was never reached).
func (p *Proc) WaitFor(what string, cond func() bool) {
	p.t.Helper()
	for !cond() {
		select {
		case <-p.done:
			p.t.Fatalf("traceduck ended before %s: %s", what, p.res)
		case <-time.After(time.Millisecond):
		}
	}
}

// WaitStopped waits for the process to stop at its StopEnv point.
func (p *Proc) WaitStopped() {
	p.t.Helper()
	select {
	case <-p.stopped:
	case <-p.done:
		p.t.Fatalf("traceduck ended before it stopped: %s", p.res)
	}
}

// Kill sends SIGKILL and waits for the process to be gone.
func (p *Proc) Kill() {
	p.t.Helper()
	if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		p.t.Fatal(err)
	}
	<-p.done
	if p.res.Code == 0 {
		p.t.Fatalf("traceduck ended by itself before it was killed: %s", p.res)
	}
}

// KillOrDone is Kill for a process that may have ended by itself
// already, which it must have done with success.
func (p *Proc) KillOrDone() {
	p.t.Helper()
	p.cmd.Process.Signal(syscall.SIGKILL)
	<-p.done
	if p.res.Code != 0 && !strings.Contains(p.cmd.ProcessState.String(), "killed") {
		p.t.Fatalf("traceduck failed: %s", p.res)
	}
}

// Wait waits for the process to end by itself.
func (p *Proc) Wait() Result {
	<-p.done
	return p.res
}

// Ended is the result of a process that has ended, nil while it runs.
func (p *Proc) Ended() *Result {
	select {
	case <-p.done:
		r := p.res
		return &r
	default:
		return nil
	}
}

// StderrText is what the process printed on standard error so far.
func (p *Proc) StderrText() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.stderr.String()
}

// OpenFDs returns the descriptors the process has open on path, lowest
// first.
func (p *Proc) OpenFDs(path string) []int {
	dir := fmt.Sprintf("/proc/%d/fd", p.cmd.Process.Pid)
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var fds []int
	for _, e := range ents {
		if target, err := os.Readlink(filepath.Join(dir, e.Name())); err == nil && target == path {
			if fd, err := strconv.Atoi(e.Name()); err == nil {
				fds = append(fds, fd)
			}
		}
	}
	sort.Ints(fds)
	return fds
}

// HasOpen reports whether the process has path open.
func (p *Proc) HasOpen(path string) bool { return len(p.OpenFDs(path)) > 0 }

// TracePos is the file position of the descriptor the trace is parsed
// from (the lowest one on path) and how many descriptors are open on it.
func (p *Proc) TracePos(path string) (pos int64, n int) {
	fds := p.OpenFDs(path)
	if len(fds) == 0 {
		return 0, 0
	}
	info, err := os.ReadFile(fmt.Sprintf("/proc/%d/fdinfo/%d", p.cmd.Process.Pid, fds[0]))
	if err != nil {
		return 0, 0
	}
	for _, line := range strings.Split(string(info), "\n") {
		if v, ok := strings.CutPrefix(line, "pos:"); ok {
			pos, _ = strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		}
	}
	return pos, len(fds)
}
