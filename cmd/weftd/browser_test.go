package main

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/internal/testkit"
)

// TestWeftd_BrowserThroughConnectWebAcrossOrigins loads a page bundled from
// client/ts/test/browser/page.ts into headless Chromium. The page is served
// from one loopback origin and calls weftd on another through the TS client
// (connect-web, Connect and gRPC-Web), so every call needs a real CORS
// preflight, which a recording proxy in front of weftd observes. weftd allows
// only the page's origin: the same page from a second origin is refused by the
// browser.
func TestWeftd_BrowserThroughConnectWebAcrossOrigins(t *testing.T) {
	t.Parallel()
	browser := requireChromium(t)
	npm := requireTool(t, "npm")
	node := requireTool(t, "node")
	root := repoRoot(t)
	if _, err := os.Stat(filepath.Join(root, "node_modules", "playwright-core")); err != nil {
		testkit.SkipOrFail(t, "node_modules/playwright-core is not installed (run `make tools`)")
	}

	build := exec.Command(npm, "run", "-s", "build:browser")
	build.Dir = root
	out, err := build.CombinedOutput()
	require.NoError(t, err, "npm run build:browser:\n%s", out)

	page := httptest.NewServer(pageHandler(root))
	t.Cleanup(page.Close)
	refused := httptest.NewServer(pageHandler(root))
	t.Cleanup(refused.Close)

	d := startWeftdIn(t, t.TempDir(), "--cors-origin", page.URL)
	rec := &preflightRecorder{}
	api := httptest.NewServer(rec.proxy(t, d.URL))
	t.Cleanup(api.Close)

	pageURL := page.URL + "/?weft=" + url.QueryEscape(api.URL)
	refusedURL := refused.URL + "/?weft=" + url.QueryEscape(api.URL)
	drive := exec.Command(node, filepath.Join(root, "client/ts/dist-test/browser/drive.mjs"), pageURL, refusedURL)
	drive.Dir = root
	drive.Env = append(os.Environ(), "CHROMIUM="+browser)
	var stderr strings.Builder
	drive.Stderr = &stderr
	stdout, err := drive.Output()
	require.NoError(t, err, "driving chromium:\n%s\n%s", stdout, stderr.String())

	var visits []struct {
		URL  string `json:"url"`
		Page struct {
			Origin  string                    `json:"origin"`
			Error   string                    `json:"error"`
			Results map[string]browserOutcome `json:"results"`
		} `json:"page"`
		Console []string `json:"console"`
		Failed  []string `json:"failed"`
	}
	require.NoError(t, json.Unmarshal(stdout, &visits), "%s", stdout)
	require.Len(t, visits, 2)

	// The allowed origin: typed faults and real answers, through both protocols.
	allowed := visits[0]
	require.Empty(t, allowed.Page.Error, "page failed; console: %v", allowed.Console)
	require.Equal(t, page.URL, allowed.Page.Origin)
	for _, proto := range []string{"connect", "grpc-web"} {
		invalid := allowed.Page.Results[proto+".getRunInvalid"]
		require.False(t, invalid.OK, "%s: GetRun with an empty run_id succeeded", proto)
		require.Equal(t, "InvalidArgument", invalid.Code, "%s: %s", proto, invalid.Message)
		require.Equal(t, 3, invalid.ConnectCode, proto)
		require.Equal(t, []browserViolation{{Field: "run_id", RuleID: "string.min_len"}}, invalid.Violations, proto)
		require.Regexp(t, `^[0-9a-f-]{36}$`, invalid.CorrelationID, proto)

		ok := allowed.Page.Results[proto+".submitAndGet"]
		require.True(t, ok.OK, "%s: SubmitRun+GetRun failed: %s %s; console: %v", proto, ok.Code, ok.Message, allowed.Console)
		require.NotEmpty(t, ok.SubmittedRunID, proto)
		require.Equal(t, ok.SubmittedRunID, ok.RunID, proto)
		require.Equal(t, "PENDING", ok.Status, proto)
	}

	// Another origin: the browser refuses weftd's answer (no Access-Control-Allow-Origin).
	other := visits[1]
	require.Equal(t, refused.URL, other.Page.Origin)
	for name, res := range other.Page.Results {
		require.False(t, res.OK, "%s succeeded from an origin weftd does not allow", name)
		require.True(t, res.NetworkError, "%s: want a network (CORS) error, got %s %s", name, res.Code, res.Message)
	}
	require.NotEmpty(t, other.Failed, "no request failed from the refused origin")

	// Real preflights reached weftd and were answered for the allowed origin only.
	pre := rec.all()
	var allowedSeen, refusedSeen bool
	for _, p := range pre {
		require.Equal(t, "POST", p.RequestMethod, "%+v", p)
		switch p.Origin {
		case page.URL:
			allowedSeen = true
			require.Equal(t, page.URL, p.AllowOrigin, "%+v", p)
			require.Less(t, p.Status, 300, "%+v", p)
		case refused.URL:
			refusedSeen = true
			require.Empty(t, p.AllowOrigin, "%+v", p)
		default:
			t.Fatalf("a preflight from an unexpected origin: %+v", p)
		}
	}
	require.True(t, allowedSeen, "no preflight from %s reached weftd: %+v", page.URL, pre)
	require.True(t, refusedSeen, "no preflight from %s reached weftd: %+v", refused.URL, pre)
	paths := map[string]bool{}
	for _, p := range pre {
		if p.Origin == page.URL {
			paths[p.Path] = true
		}
	}
	require.True(t, paths["/weft.v1.RunService/GetRun"] && paths["/weft.v1.RunService/SubmitRun"], "preflighted paths: %v", paths)
	t.Logf("chromium %s: %d preflights; allowed origin results: %+v", browser, len(pre), allowed.Page.Results)
	t.Logf("refused origin console: %v", other.Console)
}

type browserViolation struct {
	Field  string `json:"field"`
	RuleID string `json:"ruleId"`
}

// browserOutcome is one call's result as page.ts writes it.
type browserOutcome struct {
	OK             bool               `json:"ok"`
	Code           string             `json:"code"`
	ConnectCode    int                `json:"connectCode"`
	Violations     []browserViolation `json:"violations"`
	CorrelationID  string             `json:"correlationId"`
	NetworkError   bool               `json:"networkError"`
	Message        string             `json:"message"`
	SubmittedRunID string             `json:"submittedRunId"`
	RunID          string             `json:"runId"`
	Status         string             `json:"status"`
}

// pageHandler serves the test page and its bundle.
func pageHandler(root string) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		http.ServeFile(w, r, filepath.Join(root, "client/ts/test/browser/index.html"))
	})
	mux.HandleFunc("GET /page.js", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/javascript; charset=utf-8")
		http.ServeFile(w, r, filepath.Join(root, "client/ts/dist-test/browser/page.js"))
	})
	return mux
}

// preflight is one CORS preflight the browser sent and weftd's answer.
type preflight struct {
	Path, Origin, RequestMethod, RequestHeaders, AllowOrigin string
	Status                                                   int
}

// preflightRecorder is a reverse proxy in front of weftd that records every
// preflight (OPTIONS with Access-Control-Request-Method) and its answer.
type preflightRecorder struct {
	mu   sync.Mutex
	seen []preflight
}

func (p *preflightRecorder) proxy(t *testing.T, target string) http.Handler {
	u, err := url.Parse(target)
	require.NoError(t, err)
	rp := httputil.NewSingleHostReverseProxy(u)
	rp.FlushInterval = -1
	rp.ModifyResponse = func(res *http.Response) error {
		req := res.Request
		if req.Method == http.MethodOptions && req.Header.Get("Access-Control-Request-Method") != "" {
			p.mu.Lock()
			p.seen = append(p.seen, preflight{
				Path:           req.URL.Path,
				Origin:         req.Header.Get("Origin"),
				RequestMethod:  req.Header.Get("Access-Control-Request-Method"),
				RequestHeaders: req.Header.Get("Access-Control-Request-Headers"),
				AllowOrigin:    res.Header.Get("Access-Control-Allow-Origin"),
				Status:         res.StatusCode,
			})
			p.mu.Unlock()
		}
		return nil
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// Go's HTTP/1 server drains and closes a request body when its
		// handler starts the response (golang/go#40747). The transport
		// copying that body to weftd reads it once more after the declared
		// length, to check there is no more; if weftd's answer has come back
		// first, that read fails and the transport tears the connection to
		// weftd down in the middle of the answer (seen in CI under load as
		// ERR_INCOMPLETE_CHUNKED_ENCODING). Full duplex leaves the body open.
		if err := http.NewResponseController(w).EnableFullDuplex(); err != nil {
			t.Errorf("proxy: full duplex: %v", err)
		}
		rp.ServeHTTP(w, r)
	})
}

func (p *preflightRecorder) all() []preflight {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]preflight(nil), p.seen...)
}

// requireChromium finds Debian's Chromium (or $CHROMIUM), skipping loudly on
// a laptop without it and failing when CI is set.
func requireChromium(t *testing.T) string {
	t.Helper()
	candidates := []string{os.Getenv("CHROMIUM"), "/usr/bin/chromium"}
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			candidates = append(candidates, p)
		}
	}
	for _, c := range candidates {
		if c == "" {
			continue
		}
		if fi, err := os.Stat(c); err == nil && !fi.IsDir() {
			return c
		}
	}
	testkit.SkipOrFail(t, "chromium is not installed (run `make tools`, which installs Debian's chromium)")
	return ""
}
