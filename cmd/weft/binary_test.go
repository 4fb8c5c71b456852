package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/client"
)

// process is a started binary whose stderr is kept for failure messages.
type process struct {
	cmd  *exec.Cmd
	mu   sync.Mutex
	log  bytes.Buffer
	done chan error
}

func (p *process) logs() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.log.String()
}

// start runs bin and calls onLine with each stderr line; the process gets
// SIGTERM when the test ends and must exit 0.
func start(t *testing.T, bin string, env []string, onLine func(string), args ...string) *process {
	t.Helper()
	p := &process{cmd: exec.Command(bin, args...), done: make(chan error, 1)}
	p.cmd.Env = append(os.Environ(), env...)
	stderr, err := p.cmd.StderrPipe()
	require.NoError(t, err)
	require.NoError(t, p.cmd.Start())
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			p.mu.Lock()
			p.log.WriteString(sc.Text() + "\n")
			p.mu.Unlock()
			onLine(sc.Text())
		}
		p.done <- p.cmd.Wait()
	}()
	t.Cleanup(func() {
		_ = p.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case err := <-p.done:
			require.NoError(t, err, "%s did not exit cleanly:\n%s", filepath.Base(bin), p.logs())
		case <-time.After(40 * time.Second):
			_ = p.cmd.Process.Kill()
			t.Errorf("%s did not stop on SIGTERM:\n%s", filepath.Base(bin), p.logs())
		}
	})
	return p
}

func TestBinary_QuickstartAgainstRealWeftdAndExampleWorker(t *testing.T) {
	if testing.Short() {
		t.Skip("builds weft, weftd and the example worker")
	}
	root, err := filepath.Abs("../..")
	require.NoError(t, err)
	bin := t.TempDir()
	build := exec.Command("go", "build", "-o", bin+string(filepath.Separator), "./cmd/weft", "./cmd/weftd", "./examples/worker")
	build.Dir = root
	out, err := build.CombinedOutput()
	require.NoError(t, err, "go build: %s", out)

	ready := make(chan string, 1)
	weftd := start(t, filepath.Join(bin, "weftd"), nil, func(line string) {
		var entry struct {
			Msg  string `json:"msg"`
			Addr string `json:"addr"`
		}
		if json.Unmarshal([]byte(line), &entry) == nil && entry.Msg == "weftd listening" {
			ready <- entry.Addr
		}
	}, "--addr", "127.0.0.1:0", "--data-dir", t.TempDir())
	var url string
	select {
	case addr := <-ready:
		url = "http://" + addr
	case <-time.After(30 * time.Second):
		t.Fatalf("weftd did not report listening:\n%s", weftd.logs())
	}
	env := []string{"WEFT_URL=" + url}
	start(t, filepath.Join(bin, "worker"), env, func(string) {})

	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	weft := func(ctx context.Context, args []string) result {
		cmd := exec.CommandContext(ctx, filepath.Join(bin, "weft"), args...)
		cmd.Dir = root
		cmd.Env = append(os.Environ(), env...)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		var exit *exec.ExitError
		code := 0
		if errors.As(err, &exit) {
			code, err = exit.ExitCode(), errors.New(strings.TrimSpace(stderr.String()))
		}
		return result{code: code, err: err, stdout: stdout.String(), stderr: stderr.String()}
	}
	q := &quickstart{t: t, c: client.New(url), lines: quickstartLines(t), vars: map[string]string{}, weft: weft}
	q.runAll(ctx)

	r := weft(ctx, []string{"get", "no-such-run"})
	require.Equal(t, 1, r.code)
	require.Contains(t, r.stderr, "weft: NotFound")
	require.Contains(t, r.stderr, "correlation id")
	r = weft(ctx, []string{"get"})
	require.Equal(t, 2, r.code)
	require.Contains(t, r.stderr, "usage: weft get RUN")
	r = weft(ctx, []string{"health"})
	require.Equal(t, 0, r.code, r.stderr)
}
