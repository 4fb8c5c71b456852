// Command weft is Weft's command-line client. It talks to weftd over the
// public API only.
//
//	weft [--addr URL] health    report whether each weft.v1 service is serving
//
// The address defaults to $WEFT_URL, then http://127.0.0.1:7400.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"
)

func main() {
	code, err := run(context.Background(), os.Args[1:], os.Getenv, os.Stdout, os.Stderr)
	if err != nil {
		fmt.Fprintln(os.Stderr, "weft:", err)
	}
	os.Exit(code)
}

// services are the services `weft health` checks.
var services = []string{"weft.v1.RunService", "weft.v1.SignalService", "weft.v1.EventService", "weft.v1.WorkerService"}

// run executes one command and answers the exit code.
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) (int, error) {
	fs := flag.NewFlagSet("weft", flag.ContinueOnError)
	fs.SetOutput(stderr)
	addr := fs.String("addr", envOr(getenv("WEFT_URL"), "http://127.0.0.1:7400"), "weftd base URL")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: weft [--addr URL] health")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return 2, nil
	}
	switch fs.Arg(0) {
	case "health":
		return health(ctx, strings.TrimRight(*addr, "/"), stdout)
	case "":
		fs.Usage()
		return 2, nil
	default:
		fs.Usage()
		return 2, fmt.Errorf("unknown command %q", fs.Arg(0))
	}
}

func envOr(v, fallback string) string {
	if v != "" {
		return v
	}
	return fallback
}

// health prints each service's serving status; it fails unless all serve.
func health(ctx context.Context, base string, stdout io.Writer) (int, error) {
	client := &http.Client{Timeout: 10 * time.Second}
	code := 0
	for _, svc := range services {
		status, err := checkHealth(ctx, client, base, svc)
		if err != nil {
			return 1, err
		}
		if status != "SERVING" {
			code = 1
		}
		fmt.Fprintf(stdout, "%-24s %s\n", svc, status)
	}
	return code, nil
}

// checkHealth calls grpc.health.v1.Health/Check over Connect's JSON protocol.
func checkHealth(ctx context.Context, client *http.Client, base, svc string) (string, error) {
	body, _ := json.Marshal(map[string]string{"service": svc})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"/grpc.health.v1.Health/Check", bytes.NewReader(body))
	if err != nil {
		return "", fmt.Errorf("address %q: %w", base, err)
	}
	req.Header.Set("Content-Type", "application/json")
	res, err := client.Do(req)
	if err != nil {
		return "", fmt.Errorf("weftd at %s is not reachable: %w", base, err)
	}
	defer res.Body.Close()
	var out struct {
		Status string `json:"status"`
	}
	if res.StatusCode != http.StatusOK {
		return "", fmt.Errorf("health check of %s answered HTTP %d", svc, res.StatusCode)
	}
	if err := json.NewDecoder(res.Body).Decode(&out); err != nil {
		return "", errors.New("health check answered something that is not JSON")
	}
	return strings.TrimPrefix(out.Status, "SERVING_STATUS_"), nil
}
