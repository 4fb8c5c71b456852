package main

import (
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/conformance/apitest"
	"github.com/weft-dev/weft/internal/testkit"
)

func TestOptions_DefaultIsLoopback7400AndEnvThenFlagsOverride(t *testing.T) {
	t.Parallel()
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
	t.Parallel()
	_, err := parseOptions([]string{"--log-level", "loud"}, func(string) string { return "" }, io.Discard)
	require.ErrorContains(t, err, `log level must be debug, info, warn or error, got "loud"`)
}

func TestWeftd_ServesAPISuiteAsARealProcess(t *testing.T) {
	t.Parallel()
	d := testkit.StartWeftd(t, nil)
	apitest.Exercise(t, d.URL)
}

func TestWeftd_GrpcurlListsAndDescribesServices(t *testing.T) {
	t.Parallel()
	grpcurl := requireTool(t, "grpcurl")
	d := testkit.StartWeftd(t, nil)
	out := runTool(t, grpcurl, "-plaintext", d.Addr, "list")
	for _, svc := range []string{"weft.v1.RunService", "weft.v1.SignalService", "weft.v1.EventService",
		"weft.v1.WorkerService", "grpc.health.v1.Health", "grpc.reflection.v1.ServerReflection"} {
		require.Contains(t, out, svc+"\n")
	}
	desc := runTool(t, grpcurl, "-plaintext", d.Addr, "describe", "weft.v1.RunService")
	require.Contains(t, desc, "rpc SubmitRun ( .weft.v1.SubmitRunRequest ) returns ( .weft.v1.SubmitRunResponse );")
	msg := runTool(t, grpcurl, "-plaintext", d.Addr, "describe", "weft.v1.SignalRunRequest")
	require.Contains(t, msg, "optional string signal_id = 3")
}

func TestWeftd_InvalidArgumentThroughGrpcurl(t *testing.T) {
	t.Parallel()
	grpcurl := requireTool(t, "grpcurl")
	d := testkit.StartWeftd(t, nil)
	cmd := exec.Command(grpcurl, "-plaintext", "-d", `{"run_id": ""}`, d.Addr, "weft.v1.RunService/GetRun")
	out, err := cmd.CombinedOutput()
	require.Error(t, err, "grpcurl succeeded: %s", out)
	text := string(out)
	require.Contains(t, text, "Code: InvalidArgument")
	require.Contains(t, text, `"fieldName": "run_id"`)
	require.Contains(t, text, `"ruleId": "string.min_len"`)
	require.Contains(t, text, "FAULT_CODE_INVALID_ARGUMENT")
}

func TestWeftd_InvalidArgumentThroughCurl(t *testing.T) {
	t.Parallel()
	curl := requireTool(t, "curl")
	d := testkit.StartWeftd(t, nil)
	out := runTool(t, curl, "-sS", "-w", "\n%{http_code}", "-X", "POST", "-H", "Content-Type: application/json",
		"-d", `{"run_id": ""}`, d.URL+"/weft.v1.RunService/GetRun")
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
	t.Parallel()
	d := testkit.StartWeftd(t, nil)
	require.NoError(t, d.Cmd.Process.Signal(syscall.SIGTERM))
	require.NoError(t, d.Wait(), "weftd did not exit 0 on SIGTERM")
	require.Contains(t, d.Logs(), `"msg":"weftd stopped"`)
}

func TestMain(m *testing.M) { testkit.Main(m) }

// daemon is a weftd process a test started (testkit.StartWeftd).
type daemon = testkit.Weftd

// weftdBinary answers weftd built from this tree, once per test binary.
func weftdBinary(t *testing.T) string { return filepath.Join(testkit.Build(t, "./cmd/weftd"), "weftd") }

// startWeftdIn starts weftd on a free loopback port and the data directory
// dir, with any extra flags (e.g. --cors-origin), and stops it when the test ends.
func startWeftdIn(t *testing.T, dir string, extra ...string) *daemon {
	t.Helper()
	return testkit.StartWeftd(t, nil, append([]string{"--data-dir", dir}, extra...)...)
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
	testkit.SkipOrFail(t, name+" is not installed (run `make tools`)")
	return ""
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
	t.Parallel()
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
