package main

import (
	"bufio"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/conformance/apitest"
)

func TestOptions_DefaultIsLoopback7400AndEnvThenFlagsOverride(t *testing.T) {
	env := map[string]string{}
	getenv := func(k string) string { return env[k] }

	opts, err := parseOptions(nil, getenv, io.Discard)
	require.NoError(t, err)
	require.Equal(t, "127.0.0.1:7400", opts.addr)
	require.Equal(t, ".weft", opts.dataDir)

	env["WEFT_ADDR"] = "127.0.0.1:7500"
	opts, err = parseOptions(nil, getenv, io.Discard)
	require.NoError(t, err)
	require.Equal(t, "127.0.0.1:7500", opts.addr)

	opts, err = parseOptions([]string{"--addr", "127.0.0.1:7600"}, getenv, io.Discard)
	require.NoError(t, err)
	require.Equal(t, "127.0.0.1:7600", opts.addr)
}

func TestOptions_BadLogLevelNamesTheValue(t *testing.T) {
	_, err := parseOptions([]string{"--log-level", "loud"}, func(string) string { return "" }, io.Discard)
	require.ErrorContains(t, err, `log level must be debug, info, warn or error, got "loud"`)
}

func TestWeftd_ServesAPISuiteAsARealProcess(t *testing.T) {
	d := startWeftd(t)
	apitest.Exercise(t, d.url)
}

func TestWeftd_GrpcurlListsAndDescribesServices(t *testing.T) {
	grpcurl := requireTool(t, "grpcurl")
	d := startWeftd(t)
	out := runTool(t, grpcurl, "-plaintext", d.addr, "list")
	for _, svc := range []string{"weft.v1.RunService", "weft.v1.SignalService", "weft.v1.EventService",
		"weft.v1.WorkerService", "grpc.health.v1.Health", "grpc.reflection.v1.ServerReflection"} {
		require.Contains(t, out, svc+"\n")
	}
	desc := runTool(t, grpcurl, "-plaintext", d.addr, "describe", "weft.v1.RunService")
	require.Contains(t, desc, "rpc SubmitRun ( .weft.v1.SubmitRunRequest ) returns ( .weft.v1.SubmitRunResponse );")
	msg := runTool(t, grpcurl, "-plaintext", d.addr, "describe", "weft.v1.SignalRunRequest")
	require.Contains(t, msg, "optional string signal_id = 3")
}

func TestWeftd_InvalidArgumentThroughGrpcurl(t *testing.T) {
	grpcurl := requireTool(t, "grpcurl")
	d := startWeftd(t)
	cmd := exec.Command(grpcurl, "-plaintext", "-d", `{"run_id": ""}`, d.addr, "weft.v1.RunService/GetRun")
	out, err := cmd.CombinedOutput()
	require.Error(t, err, "grpcurl succeeded: %s", out)
	text := string(out)
	require.Contains(t, text, "Code: InvalidArgument")
	require.Contains(t, text, `"fieldName": "run_id"`)
	require.Contains(t, text, `"ruleId": "string.min_len"`)
	require.Contains(t, text, "FAULT_CODE_INVALID_ARGUMENT")
}

func TestWeftd_InvalidArgumentThroughCurl(t *testing.T) {
	curl := requireTool(t, "curl")
	d := startWeftd(t)
	out := runTool(t, curl, "-sS", "-w", "\n%{http_code}", "-X", "POST", "-H", "Content-Type: application/json",
		"-d", `{"run_id": ""}`, d.url+"/weft.v1.RunService/GetRun")
	body, status, _ := strings.Cut(strings.TrimSpace(out), "\n")
	require.Equal(t, "400", status)
	var got struct {
		Code    string `json:"code"`
		Details []struct {
			Type  string         `json:"type"`
			Debug map[string]any `json:"debug"`
		} `json:"details"`
	}
	require.NoError(t, json.Unmarshal([]byte(body), &got), body)
	require.Equal(t, "invalid_argument", got.Code)
	var types []string
	for _, d := range got.Details {
		types = append(types, d.Type)
	}
	require.ElementsMatch(t, []string{"buf.validate.Violations", "weft.v1.Fault"}, types)
	require.Contains(t, body, `"field_name":"run_id"`, "the debug JSON uses proto field names")
}

func TestWeftd_SIGTERMShutsDownCleanly(t *testing.T) {
	d := startWeftd(t)
	require.NoError(t, d.cmd.Process.Signal(syscall.SIGTERM))
	require.NoError(t, d.wait(), "weftd did not exit 0 on SIGTERM")
	require.Contains(t, d.logs(), `"msg":"weftd stopped"`)
}

// daemon is a weftd process started by a test.
type daemon struct {
	cmd    *exec.Cmd
	addr   string
	url    string
	mu     sync.Mutex
	log    strings.Builder
	done   chan error
	waited bool
}

func (d *daemon) logs() string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.log.String()
}

func (d *daemon) wait() error {
	select {
	case err := <-d.done:
		d.waited = true
		return err
	case <-time.After(15 * time.Second):
		return os.ErrDeadlineExceeded
	}
}

var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
)

// weftdBinary builds weftd once per test binary.
func weftdBinary(t *testing.T) string {
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "weftd-test-")
		if err != nil {
			buildErr = err
			return
		}
		binPath = filepath.Join(dir, "weftd")
		out, err := exec.Command("go", "build", "-o", binPath, ".").CombinedOutput()
		if err != nil {
			buildErr = &buildError{out: string(out), err: err}
		}
	})
	require.NoError(t, buildErr)
	return binPath
}

type buildError struct {
	out string
	err error
}

func (e *buildError) Error() string { return e.err.Error() + ": " + e.out }

// startWeftd starts weftd on a free loopback port and a fresh data directory,
// and stops it when the test ends.
func startWeftd(t *testing.T) *daemon {
	t.Helper()
	return startWeftdIn(t, t.TempDir())
}

// stopWeftd stops d with SIGTERM and requires a clean exit.
func stopWeftd(t *testing.T, d *daemon) {
	t.Helper()
	require.NoError(t, d.cmd.Process.Signal(syscall.SIGTERM))
	require.NoError(t, d.wait(), "weftd did not exit 0 on SIGTERM:\n%s", d.logs())
}

// startWeftdIn starts weftd on a free loopback port and the data directory
// dir, with any extra flags (e.g. --cors-origin), and stops it when the test ends.
func startWeftdIn(t *testing.T, dir string, extra ...string) *daemon {
	t.Helper()
	return startWeftdEnv(t, nil, append([]string{"--addr", "127.0.0.1:0", "--data-dir", dir}, extra...)...)
}

// readLogs copies weftd's log lines and reports the listening address.
func (d *daemon) readLogs(r io.Reader, ready chan<- string) {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		line := sc.Text()
		d.mu.Lock()
		d.log.WriteString(line + "\n")
		d.mu.Unlock()
		var entry struct {
			Msg  string `json:"msg"`
			Addr string `json:"addr"`
		}
		if json.Unmarshal([]byte(line), &entry) == nil && entry.Msg == "weftd listening" {
			ready <- entry.Addr
		}
	}
	d.done <- d.cmd.Wait()
}

// requireTool finds a command on PATH or in the repository's bin/.
func requireTool(t *testing.T, name string) string {
	t.Helper()
	if p, err := exec.LookPath(name); err == nil {
		return p
	}
	p := filepath.Join(repoRoot(t), "bin", name)
	if _, err := os.Stat(p); err == nil {
		return p
	}
	skipOrFail(t, name+" is not installed (run `make tools`)")
	return ""
}

// skipOrFail skips loudly on a laptop and fails in CI.
func skipOrFail(t *testing.T, reason string) {
	t.Helper()
	if os.Getenv("CI") != "" {
		t.Fatalf("CI is set and %s", reason)
	}
	t.Skipf("SKIPPED: %s", reason)
}

func repoRoot(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs("../..")
	require.NoError(t, err)
	return dir
}

func runTool(t *testing.T, name string, args ...string) string {
	t.Helper()
	out, err := exec.Command(name, args...).CombinedOutput()
	require.NoError(t, err, "%s %v:\n%s", name, args, out)
	return string(out)
}

// TestWeftd_HelpPrintsTheFlagsOnStdoutAndExitsZero: -h and --help are a
// request, not a mistake.
func TestWeftd_HelpPrintsTheFlagsOnStdoutAndExitsZero(t *testing.T) {
	for _, arg := range []string{"-h", "--help"} {
		var stdout, stderr strings.Builder
		cmd := exec.Command(weftdBinary(t), arg)
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		require.NoError(t, cmd.Run(), "weftd %s: %s", arg, stderr.String())
		require.Contains(t, stdout.String(), "usage: weftd [flags]")
		require.Contains(t, stdout.String(), "-redis-prefix")
		require.Empty(t, stderr.String())
	}
}
