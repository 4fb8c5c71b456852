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
	"github.com/weft-dev/weft/internal/testkit"
)

func TestBinary_QuickstartAgainstRealWeftdAndExampleWorker(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds weft, weftd and the example worker")
	}
	root, err := filepath.Abs("../..")
	require.NoError(t, err)
	bin := testkit.Build(t, "./cmd/weft", "./cmd/weftd", "./examples/worker")
	url := testkit.StartWeftd(t, nil).URL
	env := []string{"WEFT_URL=" + url}
	testkit.StartProcess(t, filepath.Join(bin, "worker"), env, nil)

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
