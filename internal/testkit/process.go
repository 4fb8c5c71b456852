package testkit

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/client"
)

// stopWithin is how long a process has to exit after SIGTERM (a loaded
// machine included).
const stopWithin = 40 * time.Second

// builds are the commands built for this test binary, into one directory.
var builds struct {
	sync.Mutex
	dir  string
	done map[string]bool
}

// Build builds the module's commands pkgs ("./cmd/weftd", "./cmd/weft",
// …), from the module's root, once per test binary, into one directory,
// and answers the directory (each binary is named after its package).
// Main removes it.
func Build(t testing.TB, pkgs ...string) string {
	t.Helper()
	builds.Lock()
	defer builds.Unlock()
	var missing []string
	for _, p := range pkgs {
		if !builds.done[p] {
			missing = append(missing, p)
		}
	}
	if len(missing) > 0 {
		require.NoError(t, build(missing))
	}
	return builds.dir
}

func build(pkgs []string) error {
	root, err := ModuleRoot()
	if err != nil {
		return err
	}
	if builds.dir == "" {
		if builds.dir, err = os.MkdirTemp("", "weft-test-bin-"); err != nil {
			return err
		}
		builds.done = map[string]bool{}
	}
	cmd := exec.Command("go", append([]string{"build", "-o", builds.dir + string(filepath.Separator)}, pkgs...)...)
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go build %s: %w: %s", strings.Join(pkgs, " "), err, out)
	}
	for _, p := range pkgs {
		builds.done[p] = true
	}
	return nil
}

// Main runs a package's tests and removes what Build built; a package
// whose tests build commands calls it from TestMain.
func Main(m *testing.M) {
	code := m.Run()
	builds.Lock()
	if builds.dir != "" {
		_ = os.RemoveAll(builds.dir)
	}
	builds.Unlock()
	os.Exit(code)
}

// ModuleRoot answers the directory of the module's go.mod, above the
// working directory.
func ModuleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("testkit: no go.mod above the working directory")
		}
		dir = parent
	}
}

// Process is a program a test started; its stderr is kept for failure
// messages.
type Process struct {
	Cmd    *exec.Cmd
	mu     sync.Mutex
	log    strings.Builder
	done   chan error
	waited bool
}

// StartProcess runs bin with env added to the environment, and calls
// onLine (when not nil) with each line it writes to stderr. When the test
// ends a process still running gets SIGTERM and must exit 0.
func StartProcess(t testing.TB, bin string, env []string, onLine func(string), args ...string) *Process {
	t.Helper()
	p := &Process{Cmd: exec.Command(bin, args...), done: make(chan error, 1)}
	p.Cmd.Env = append(os.Environ(), env...)
	stderr, err := p.Cmd.StderrPipe()
	require.NoError(t, err)
	require.NoError(t, p.Cmd.Start())
	go func() {
		sc := bufio.NewScanner(stderr)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			p.mu.Lock()
			p.log.WriteString(sc.Text() + "\n")
			p.mu.Unlock()
			if onLine != nil {
				onLine(sc.Text())
			}
		}
		p.done <- p.Cmd.Wait()
	}()
	t.Cleanup(func() {
		if p.waited {
			return
		}
		_ = p.Cmd.Process.Signal(syscall.SIGTERM)
		if err := p.Wait(); err != nil {
			_ = p.Cmd.Process.Kill()
			t.Errorf("%s did not stop cleanly on SIGTERM: %v\n%s", filepath.Base(bin), err, p.Logs())
		}
	})
	return p
}

// Logs answers what the process wrote to stderr so far.
func (p *Process) Logs() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.log.String()
}

// Wait waits for the process to exit and answers how it did
// (os.ErrDeadlineExceeded when it has not within 40 s).
func (p *Process) Wait() error {
	select {
	case err := <-p.done:
		p.waited = true
		return err
	case <-time.After(stopWithin):
		return os.ErrDeadlineExceeded
	}
}

// Stop sends SIGTERM and requires a clean exit.
func (p *Process) Stop(t testing.TB) {
	t.Helper()
	require.NoError(t, p.Cmd.Process.Signal(syscall.SIGTERM))
	require.NoError(t, p.Wait(), "%s did not exit 0 on SIGTERM:\n%s", filepath.Base(p.Cmd.Path), p.Logs())
}

// Weftd is weftd as a real process.
type Weftd struct {
	*Process
	// Addr is the loopback address it listens on; URL is http:// and Addr.
	Addr, URL string
	Client    *client.Client
}

// StartWeftd builds weftd (once per test binary), starts it with env and
// args, and waits until it listens. Unless args say otherwise it listens
// on a free loopback port (--addr 127.0.0.1:0) and keeps its data in a
// directory of the test's own (--data-dir, when no --store is given).
func StartWeftd(t testing.TB, env []string, args ...string) *Weftd {
	t.Helper()
	bin := filepath.Join(Build(t, "./cmd/weftd"), "weftd")
	if !slices.Contains(args, "--addr") {
		args = append([]string{"--addr", "127.0.0.1:0"}, args...)
	}
	if !slices.Contains(args, "--data-dir") && !slices.Contains(args, "--store") {
		args = append(args, "--data-dir", t.TempDir())
	}
	ready := make(chan string, 1)
	p := StartProcess(t, bin, env, func(line string) {
		var entry struct {
			Msg  string `json:"msg"`
			Addr string `json:"addr"`
		}
		if json.Unmarshal([]byte(line), &entry) == nil && entry.Msg == "weftd listening" {
			select {
			case ready <- entry.Addr:
			default:
			}
		}
	}, args...)
	select {
	case addr := <-ready:
		_, port, err := net.SplitHostPort(addr)
		require.NoError(t, err)
		w := &Weftd{Process: p, Addr: net.JoinHostPort("127.0.0.1", port)}
		w.URL = "http://" + w.Addr
		w.Client = client.New(w.URL)
		return w
	case err := <-p.done:
		p.waited = true
		t.Fatalf("weftd exited before it listened (%v):\n%s", err, p.Logs())
	case <-time.After(stopWithin):
		t.Fatalf("weftd did not report listening:\n%s", p.Logs())
	}
	return nil
}

// SkipOrFail skips the test loudly on a laptop and fails it in CI (CI set).
func SkipOrFail(t testing.TB, reason string) {
	t.Helper()
	if os.Getenv("CI") != "" {
		t.Fatalf("CI is set and %s", reason)
	}
	t.Skipf("SKIPPED: %s", reason)
}
