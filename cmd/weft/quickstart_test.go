package main

import (
	"context"
	"log/slog"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/client"
	"github.com/weft-dev/weft/client/worker"
	"github.com/weft-dev/weft/examples/fulfilment"
	weftv1 "github.com/weft-dev/weft/gen/weft/v1"
)

// setupLines are the README quickstart's lines that start processes; each
// test starts their equivalent itself (in-process, or as real binaries).
var setupLines = []string{
	"make run",
	"go run ./examples/worker",
	"make ts-worker", // the TypeScript worker instead: client/ts tests it (example.test.ts)
	"make py-worker", // the Python worker instead: client/python tests it (make test-python)
	"go build -o bin/weft ./cmd/weft && export PATH=$PWD/bin:$PATH",
}

// quickstartLines answers the command lines of the README's Quickstart
// section, comments stripped, in order.
func quickstartLines(t *testing.T) []string {
	t.Helper()
	readme, err := os.ReadFile("../../README.md")
	require.NoError(t, err)
	section := string(readme)
	start := strings.Index(section, "## Quickstart")
	require.GreaterOrEqual(t, start, 0, "README has a Quickstart section")
	section = section[start+len("## Quickstart"):]
	if end := strings.Index(section, "\n## "); end >= 0 {
		section = section[:end]
	}
	var lines []string
	for _, block := range regexp.MustCompile("(?s)```sh\n(.*?)```").FindAllStringSubmatch(section, -1) {
		for line := range strings.SplitSeq(block[1], "\n") {
			if line = stripComment(line); line != "" {
				lines = append(lines, line)
			}
		}
	}
	return lines
}

// stripComment removes a trailing "# …" outside quotes, and surrounding space.
func stripComment(line string) string {
	quote := rune(0)
	for i, r := range line {
		switch {
		case quote != 0:
			if r == quote {
				quote = 0
			}
		case r == '\'' || r == '"':
			quote = r
		case r == '#' && (i == 0 || line[i-1] == ' '):
			return strings.TrimSpace(line[:i])
		}
	}
	return strings.TrimSpace(line)
}

// shellWords splits a command line as sh would for the quickstart's simple
// lines: single and double quotes, and $NAME from vars.
func shellWords(t *testing.T, line string, vars map[string]string) []string {
	t.Helper()
	var words []string
	var cur strings.Builder
	inWord := false
	quote := rune(0)
	rs := []rune(line)
	for i := 0; i < len(rs); i++ {
		r := rs[i]
		switch {
		case quote == '\'':
			if r == '\'' {
				quote = 0
			} else {
				cur.WriteRune(r)
			}
		case r == '\'' || r == '"':
			if quote == '"' && r == '"' {
				quote = 0
			} else if quote == 0 {
				quote, inWord = r, true
			} else {
				cur.WriteRune(r)
			}
		case r == '$':
			j := i + 1
			for j < len(rs) && (rs[j] == '_' || rs[j] >= 'A' && rs[j] <= 'Z') {
				j++
			}
			name := string(rs[i+1 : j])
			v, ok := vars[name]
			require.True(t, ok, "the quickstart uses $%s before setting it", name)
			cur.WriteString(v)
			inWord = true
			i = j - 1
		case r == ' ' && quote == 0:
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		default:
			cur.WriteRune(r)
			inWord = true
		}
	}
	require.Zero(t, quote, "unbalanced quote in %q", line)
	if inWord {
		words = append(words, cur.String())
	}
	return words
}

// quickstart runs the README's quickstart lines with a given way of running weft.
type quickstart struct {
	t          *testing.T
	c          *client.Client
	weft       func(ctx context.Context, args []string) result
	vars       map[string]string
	background []chan result
	lines      []string
}

// runAll runs every line, then checks the run completed and every watch saw it.
func (q *quickstart) runAll(ctx context.Context) {
	require.NotEmpty(q.t, q.lines)
	for _, line := range q.lines {
		q.line(ctx, line)
	}
	runID := q.vars["RUN"]
	require.NotEmpty(q.t, runID)
	run, err := q.c.AwaitRun(ctx, runID)
	require.NoError(q.t, err)
	require.Equal(q.t, weftv1.RunStatus_RUN_STATUS_COMPLETED, run.GetStatus())
	require.Contains(q.t, stepOf(run, "ship").GetOutput().GetStructValue().GetFields(), "tracking")
	require.Equal(q.t, "PAY-42", stepOf(run, "payment-confirmed").GetOutput().GetStructValue().GetFields()["reference"].GetStringValue())
	require.NotEmpty(q.t, q.background, "the quickstart watches the run")
	for _, ch := range q.background {
		r := <-ch
		require.Equal(q.t, 0, r.code, "%v %s", r.err, r.stderr)
		require.Contains(q.t, r.stdout, "SignalConsumed")
		require.Contains(q.t, r.stdout, "RunCompleted")
	}
	require.Regexp(q.t, `status\s+COMPLETED`, q.mustRun(ctx, []string{"get", runID}))
}

func (q *quickstart) line(ctx context.Context, line string) {
	q.t.Helper()
	for _, s := range setupLines {
		if line == s {
			return
		}
	}
	if strings.Contains(line, "<token>") {
		line = strings.ReplaceAll(line, "<token>", q.awaitToken(ctx))
	}
	if strings.HasPrefix(line, "weft signal ") {
		// A person signals once `weft get` shows the step waiting. (Sent
		// earlier, the engine buffers the signal, but a wait that consumes a
		// buffered signal does not yet schedule its dependants: see the report.)
		q.awaitSignalWait(ctx)
	}
	if m := regexp.MustCompile(`^([A-Z_]+)=\$\((.*)\)$`).FindStringSubmatch(line); m != nil {
		q.vars[m[1]] = strings.TrimSpace(q.mustRun(ctx, q.args(m[2])))
		return
	}
	if rest, ok := strings.CutSuffix(line, "&"); ok {
		ch := make(chan result, 1)
		args := q.args(strings.TrimSpace(rest))
		go func() { ch <- q.weft(ctx, args) }()
		q.background = append(q.background, ch)
		return
	}
	q.mustRun(ctx, q.args(line))
}

// args answers a weft command line's arguments.
func (q *quickstart) args(line string) []string {
	q.t.Helper()
	words := shellWords(q.t, line, q.vars)
	require.Equal(q.t, "weft", words[0], "the quickstart line %q is not a weft command this test knows", line)
	return words[1:]
}

func (q *quickstart) mustRun(ctx context.Context, args []string) string {
	q.t.Helper()
	r := q.weft(ctx, args)
	require.Equal(q.t, 0, r.code, "weft %s: %v %s", strings.Join(args, " "), r.err, r.stderr)
	return r.stdout
}

// awaitToken waits for approve-shipment's completion token, as a person
// copies it from `weft get` once the step waits.
func (q *quickstart) awaitToken(ctx context.Context) string {
	q.t.Helper()
	var run *weftv1.Run
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		var err error
		run, err = q.c.GetRun(ctx, q.vars["RUN"])
		require.NoError(q.t, err)
		if token := stepOf(run, "approve-shipment").GetCompletionToken(); token != "" {
			return token
		}
	}
	q.t.Fatalf("approve-shipment never waited for completion; the run:\n%s", printed(run))
	return ""
}

// awaitSignalWait waits until a step of the run waits for a signal.
func (q *quickstart) awaitSignalWait(ctx context.Context) {
	q.t.Helper()
	var run *weftv1.Run
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		var err error
		run, err = q.c.GetRun(ctx, q.vars["RUN"])
		require.NoError(q.t, err)
		for _, s := range run.GetSteps() {
			if s.GetWaitingForSignal() != "" {
				return
			}
		}
	}
	q.t.Fatalf("no step waited for a signal; the run:\n%s", printed(run))
}

func TestQuickstart_EveryReadmeCommandWorksInProcess(t *testing.T) {
	b := setup(t)
	lines := quickstartLines(t)
	for _, s := range setupLines {
		require.Contains(t, lines, s)
	}
	t.Chdir("../..") // the quickstart runs from the repository root
	b.startWorker(func(w *worker.Worker) { fulfilment.Register(w, slog.New(slog.DiscardHandler)) })
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	q := &quickstart{t: t, c: b.c, lines: lines, vars: map[string]string{}, weft: func(ctx context.Context, args []string) result {
		return b.weftCtx(ctx, args...)
	}}
	q.runAll(ctx)
}

func TestShellWords_QuotesAndVariables(t *testing.T) {
	t.Parallel()
	got := shellWords(t, `weft signal $RUN go --payload '{"a": "b c"}' --notes "x y"`, map[string]string{"RUN": "r1"})
	require.Equal(t, []string{"weft", "signal", "r1", "go", "--payload", `{"a": "b c"}`, "--notes", "x y"}, got)
	require.Equal(t, "weft get $RUN", stripComment("weft get $RUN   # a comment with 'quote"))
}

// printed renders a run as the CLI's table, for failure messages.
func printed(run *weftv1.Run) string {
	var b strings.Builder
	printRun(&b, run)
	return b.String()
}
