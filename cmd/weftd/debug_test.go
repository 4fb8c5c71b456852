package main

import (
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"
)

func TestDebugAddressMustBeLoopback(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		addr string
		ok   bool
	}{
		{"", true},
		{"127.0.0.1:6060", true},
		{"[::1]:6060", true},
		{"localhost:0", true},
		{"0.0.0.0:6060", false},
		{"10.1.2.3:6060", false},
		{"example.com:6060", false},
		{"6060", false},
	} {
		_, err := parseOptions([]string{"--debug-addr", tc.addr}, func(string) string { return "" }, io.Discard)
		if (err == nil) != tc.ok {
			t.Errorf("--debug-addr %q: err = %v, want ok=%v", tc.addr, err, tc.ok)
		}
		if err != nil && !strings.Contains(err.Error(), "debug address") {
			t.Errorf("--debug-addr %q: error %q does not name the setting", tc.addr, err)
		}
	}
}

func TestDebugListenerServesProfiles(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	stop, err := startDebug(addr, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	res, err := http.Get("http://" + addr + "/debug/pprof/goroutine?debug=1")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	if res.StatusCode != http.StatusOK || !strings.Contains(string(body), "goroutine profile") {
		t.Fatalf("GET /debug/pprof/goroutine: %d %.80q", res.StatusCode, body)
	}
}
