package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// serviceHealth is one service's status, as `weft health -o json` prints it.
type serviceHealth struct {
	Service string `json:"service"`
	Status  string `json:"status"`
}

// health prints each service's serving status, as a table or as JSON
// ({"services": [{"service", "status"}]}); it fails unless all serve.
func health(ctx context.Context, base string, tlsConfig *tls.Config, stdout io.Writer, asJSON bool) (int, error) {
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: tlsConfig}}
	code := 0
	all := make([]serviceHealth, 0, len(services))
	for _, svc := range services {
		status, err := checkHealth(ctx, client, base, svc)
		if err != nil {
			return 1, err
		}
		if status != "SERVING" {
			code = 1
		}
		all = append(all, serviceHealth{Service: svc, Status: status})
	}
	if asJSON {
		b, err := json.MarshalIndent(map[string]any{"services": all}, "", "  ")
		if err != nil {
			return 1, err
		}
		_, err = fmt.Fprintf(stdout, "%s\n", b)
		return code, err
	}
	for _, h := range all {
		fmt.Fprintf(stdout, "%-24s %s\n", h.Service, h.Status)
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
		return "", fmt.Errorf("weftd at %s is not reachable: %w\nis it running? (make run starts one on 127.0.0.1:7400; --addr or $WEFT_URL names another)", base, err)
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
