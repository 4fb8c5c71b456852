package bench

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// weftdPackage is built when Config.Weftd is empty.
const weftdPackage = "github.com/weft-dev/weft/cmd/weftd"

// buildWeftd builds weftd into dir and answers the binary's path.
func buildWeftd(ctx context.Context, dir string) (string, error) {
	bin := filepath.Join(dir, "weftd")
	cmd := exec.CommandContext(ctx, "go", "build", "-o", bin, weftdPackage)
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build weftd: %w\n%s", err, out)
	}
	return bin, nil
}

// weftd is a running weftd process.
type weftd struct {
	cmd  *exec.Cmd
	url  string
	logs *lockedBuffer
	done chan struct{}
}

// startWeftd starts bin with args on a free loopback port and waits until it
// answers /healthz.
func startWeftd(ctx context.Context, bin string, args ...string) (*weftd, error) {
	addr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	logs := &lockedBuffer{}
	cmd := exec.Command(bin, append([]string{"--addr", addr, "--log-level", "warn"}, args...)...)
	cmd.Stdout, cmd.Stderr = logs, logs
	cmd.Env = weftdEnv()
	// The kernel kills weftd if the harness dies without cleaning up.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start weftd: %w", err)
	}
	d := &weftd{cmd: cmd, url: "http://" + addr, logs: logs, done: make(chan struct{})}
	go func() { _ = cmd.Wait(); close(d.done) }()
	if err := d.awaitHealthy(ctx, 30*time.Second); err != nil {
		d.stop()
		return nil, err
	}
	return d, nil
}

// weftdEnv is the harness's environment without WEFT_ variables, so that
// only the flags configure weftd.
func weftdEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "WEFT_") {
			env = append(env, kv)
		}
	}
	return env
}

func freeAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", fmt.Errorf("find a free port: %w", err)
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

func (d *weftd) awaitHealthy(ctx context.Context, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) {
		select {
		case <-d.done:
			return fmt.Errorf("weftd exited before serving: %s\n%s", d.cmd.ProcessState, d.logs.String())
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
		res, err := http.Get(d.url + "/healthz")
		if err == nil {
			_ = res.Body.Close()
			if res.StatusCode == http.StatusOK {
				return nil
			}
		}
	}
	return fmt.Errorf("weftd did not answer /healthz within %s:\n%s", limit, d.logs.String())
}

// stop sends SIGTERM, and SIGKILL if weftd has not exited after 15 s.
func (d *weftd) stop() {
	_ = d.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-d.done:
	case <-time.After(15 * time.Second):
		_ = d.cmd.Process.Kill()
		<-d.done
	}
}

// exited reports weftd's exit, or nil while it runs.
func (d *weftd) exited() error {
	select {
	case <-d.done:
		return fmt.Errorf("weftd exited: %s\n%s", d.cmd.ProcessState, d.logs.String())
	default:
		return nil
	}
}

// peakRSSMB answers the process's peak resident set (VmHWM) in MiB.
func peakRSSMB(pid int) (float64, error) {
	_, peak, err := memoryMB(pid)
	return peak, err
}

// memoryMB answers the process's resident set now (VmRSS) and its peak
// since it started (VmHWM), in MiB.
func memoryMB(pid int) (rss, peak float64, err error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, 0, fmt.Errorf("read weftd's RSS: %w", err)
	}
	found := 0
	for _, line := range strings.Split(string(b), "\n") {
		name, rest, ok := strings.Cut(line, ":")
		if !ok || (name != "VmRSS" && name != "VmHWM") {
			continue
		}
		kb, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 64)
		if err != nil {
			return 0, 0, fmt.Errorf("read weftd's %s: %w", name, err)
		}
		if name == "VmRSS" {
			rss = kb / 1024
		} else {
			peak = kb / 1024
		}
		found++
	}
	if found != 2 {
		return 0, 0, errors.New("read weftd's RSS: no VmRSS or VmHWM line")
	}
	return rss, peak, nil
}

// lockedBuffer collects the tail of a process's output safely.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.buf.Len() > 1<<20 { // keep the tail: only the end is ever shown
		tail := append([]byte(nil), b.buf.Bytes()[b.buf.Len()-64<<10:]...)
		b.buf.Reset()
		b.buf.Write(tail)
	}
	return b.buf.Write(p)
}

// String answers the last 4 KiB written.
func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	s := b.buf.String()
	if len(s) > 4096 {
		s = "…" + s[len(s)-4096:]
	}
	return s
}
