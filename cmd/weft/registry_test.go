package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/client"
	"github.com/weft-dev/weft/client/worker"
	"github.com/weft-dev/weft/internal/testkit"
)

// binaryWeft answers a function that runs the built weft binary against url.
func binaryWeft(t *testing.T, url string) func(args ...string) result {
	t.Helper()
	bin := filepath.Join(testkit.Build(t, "./cmd/weft"), "weft")
	return func(args ...string) result {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		cmd := exec.CommandContext(ctx, bin, args...)
		cmd.Env = append(os.Environ(), "WEFT_URL="+url)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		code := 0
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			code = exit.ExitCode()
		} else {
			require.NoError(t, err)
		}
		return result{code: code, stdout: stdout.String(), stderr: stderr.String()}
	}
}

// registryWorker runs, against url, a worker whose "echo" activity
// succeeds and whose "boom" activity fails for good.
func registryWorker(t *testing.T, url string) {
	t.Helper()
	w := worker.New(client.New(url), worker.Options{WorkerID: "registry-cli", PollWait: 200 * time.Millisecond})
	worker.Register(w, "echo", func(_ context.Context, in any) (any, error) { return in, nil })
	worker.Register(w, "boom", func(context.Context, any) (any, error) {
		return nil, worker.Fail(worker.ClassValidation, "boom", errors.New("boom"))
	})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
}

const registryYAML = `metadata: {name: cli-orders, version: "%s"}
spec:
  steps:
    - name: %s
      activity: %s
`

func registryFile(t *testing.T, version, step, activity string) string {
	t.Helper()
	body := strings.NewReplacer("%s", "\x00").Replace(registryYAML)
	for _, v := range []string{version, step, activity} {
		body = strings.Replace(body, "\x00", v, 1)
	}
	return writeFile(t, "def-"+version+"-"+step+".yaml", body)
}

// TestBinary_DefinitionPutGetListThenSubmitByPlanAndAwait: the weft binary
// against a real weftd stores a definition (again: existing; another body
// under the version: exit 1 naming plan and version), lists and shows it,
// submits it by plan with --start --wait (exit 0 once COMPLETED), and
// weft await and submit --wait exit 1 for a run that ends FAILED.
func TestBinary_DefinitionPutGetListThenSubmitByPlanAndAwait(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds weft and weftd")
	}
	url := testkit.StartWeftd(t, nil).URL
	weft := binaryWeft(t, url)
	registryWorker(t, url)

	r := weft("definition", "put", registryFile(t, "1", "ship", "echo"))
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, "stored plan cli-orders version 1 (latest)")
	r = weft("definition", "put", registryFile(t, "1", "ship", "echo"))
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, "was already stored with this definition")
	r = weft("definition", "put", registryFile(t, "1", "ship", "boom"))
	require.Equal(t, 1, r.code)
	require.Contains(t, r.stderr, "plan cli-orders version 1 is already stored with a different definition")
	r = weft("definition", "put", registryFile(t, "2", "explode", "boom"))
	require.Equal(t, 0, r.code, r.stderr)

	r = weft("definition", "list")
	require.Equal(t, 0, r.code, r.stderr)
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	require.Len(t, lines, 3, r.stdout)
	require.Regexp(t, `^cli-orders\s+1\s+1\s`, lines[1], "version 1, not latest")
	require.Regexp(t, `^cli-orders\s+2\s+yes\s+1\s`, lines[2], "version 2, the latest")
	r = weft("definition", "get", "cli-orders", "--version", "1")
	require.Equal(t, 0, r.code, r.stderr)
	require.Regexp(t, `ship\s+1\s+echo`, r.stdout)
	r = weft("definition", "get", "cli-orders", "--version", "9")
	require.Equal(t, 1, r.code)
	require.Contains(t, r.stderr, "no definition is stored for plan cli-orders version 9")
	r = weft("definition")
	require.Equal(t, 2, r.code)
	require.Contains(t, r.stderr, "weft definition needs a subcommand")

	r = weft("submit", "--plan", "cli-orders", "--version", "1", "--start", "--wait", "--input", `{"n": 1}`)
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, "COMPLETED")

	r = weft("submit", "--plan", "cli-orders", "--start", "-q")
	require.Equal(t, 0, r.code, r.stderr)
	failing := strings.TrimSpace(r.stdout)
	r = weft("await", failing)
	require.Equal(t, 1, r.code, "the latest version fails: %s", r.stdout)
	require.Contains(t, r.stdout, "FAILED")
	require.Contains(t, r.stderr, "run "+failing+" ended FAILED")
	r = weft("await", failing, "-o", "json")
	require.Equal(t, 1, r.code)
	require.Contains(t, r.stdout, `"status": "RUN_STATUS_FAILED"`)

	r = weft("submit", registryFile(t, "3", "explode", "boom"), "--start", "--wait", "-q")
	require.Equal(t, 1, r.code)
	require.Contains(t, r.stderr, "ended FAILED")
	r = weft("submit", registryFile(t, "4", "ship", "echo"), "--wait")
	require.Equal(t, 2, r.code)
	require.Contains(t, r.stderr, "--wait needs --start")
	r = weft("await", "no-such-run")
	require.Equal(t, 1, r.code)
	require.Contains(t, r.stderr, "NotFound")
}
