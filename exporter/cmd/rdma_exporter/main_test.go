package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/rdmastack/rdmastack/internal/testkit/testenv"
)

func TestParseFlags(t *testing.T) {
	cfg, err := parseFlags([]string{"--web.listen-address=:1", "--web.listen-address=:2", "--collector.optional=a, b,,",
		"--collector.qp-counters", "--compat.node-exporter", "--log.level=debug", "--log.format=json", "--no-collector.verbs"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(cfg.listen, " ") != ":1 :2" || strings.Join(cfg.optional, " ") != "a b" || !cfg.qpCounters ||
		!cfg.nodeExporter || !cfg.logJSON || !cfg.noVerbs || cfg.logLevel.String() != "DEBUG" {
		t.Errorf("parsed %+v", cfg)
	}
	cfg, err = parseFlags(nil, io.Discard)
	if err != nil || strings.Join(cfg.listen, " ") != ":9315" || cfg.metricsPath != "/metrics" || cfg.sysfs != "/sys" {
		t.Errorf("defaults %+v, %v", cfg, err)
	}
	for _, bad := range [][]string{{"--bogus"}, {"--log.level=loud"}, {"--log.format=xml"}, {"extra"},
		{"--web.telemetry-path=metrics"}, {"--collector.qp-counters=maybe"}} {
		if _, err := parseFlags(bad, io.Discard); err == nil || strings.Contains(err.Error(), "\n") {
			t.Errorf("parseFlags(%q) = %v, want a one-line error", bad, err)
		}
	}
	var out bytes.Buffer
	if cfg, err := parseFlags([]string{"--version"}, &out); cfg != nil || err != nil || !strings.HasPrefix(out.String(), "rdma_exporter, version ") {
		t.Errorf("--version: %v %v %q", cfg, err, out.String())
	}
	out.Reset()
	if cfg, err := parseFlags([]string{"-h"}, &out); cfg != nil || err != nil || !strings.Contains(out.String(), "web.config.file") {
		t.Errorf("-h: %v %v %q", cfg, err, out.String())
	}
}

// freeAddr returns a loopback address nothing listens on.
func freeAddr(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// start runs the exporter with args until the test ends and returns its
// address once it answers.
func start(t *testing.T, args ...string) (addr string, logs *testenv.Buffer) {
	t.Helper()
	addr = freeAddr(t)
	ctx, cancel := context.WithCancel(context.Background())
	logs = &testenv.Buffer{}
	done := make(chan error, 1)
	go func() { done <- run(ctx, io.Discard, logs, append([]string{"--web.listen-address=" + addr}, args...)) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("run: %v", err)
		}
	})
	for {
		c, err := net.Dial("tcp", addr)
		if err == nil {
			c.Close()
			return addr, logs
		}
		select {
		case err := <-done:
			t.Fatalf("exporter ended: %v\n%s", err, logs)
		case <-time.After(5 * time.Millisecond):
		}
	}
}

// httpGet fetches a page and returns its body; a status other than 200
// is an error.
func httpGet(url string) (string, error) {
	resp, err := http.Get(url)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err == nil && resp.StatusCode != 200 {
		err = fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	return string(b), err
}

// get fetches a page; with a user, with basic auth.
func get(t *testing.T, url, user, pass string) (int, string) {
	t.Helper()
	req, err := http.NewRequest("GET", url, nil)
	if err != nil {
		t.Fatal(err)
	}
	if user != "" {
		req.SetBasicAuth(user, pass)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}

// TestServe: the exporter answers /metrics and its landing page; where
// the kernel has no RDMA (the host running the unit tests) it says so in
// rdma_up and its log, and keeps running.
func TestServe(t *testing.T) {
	addr, logs := start(t)
	code, body := get(t, "http://"+addr+"/metrics", "", "")
	if code != 200 || !strings.Contains(body, "rdma_up ") || !strings.Contains(body, "go_goroutines") {
		t.Fatalf("/metrics: %d\n%s", code, body)
	}
	if _, err := os.Stat("/sys/class/infiniband"); err != nil && !strings.Contains(body, "rdma_up 0") {
		t.Errorf("no RDMA here, but not rdma_up 0:\n%s", body)
	}
	if strings.Contains(body, "rdma_up 0") && !strings.Contains(logs.String(), "no RDMA") {
		t.Errorf("rdma_up 0 without a log line:\n%s", logs)
	}
	if code, body := get(t, "http://"+addr+"/", "", ""); code != 200 || !strings.Contains(body, "/metrics") {
		t.Errorf("landing page: %d\n%s", code, body)
	}
}

// TestBasicAuthAndBadConfig: --web.config.file is the exporter-toolkit's:
// basic auth is enforced; a bad file is one line and no server.
func TestBasicAuthAndBadConfig(t *testing.T) {
	hash, err := bcrypt.GenerateFromPassword([]byte("secret"), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	good := filepath.Join(dir, "web.yml")
	if err := os.WriteFile(good, fmt.Appendf(nil, "basic_auth_users:\n  prom: %s\n", hash), 0o600); err != nil {
		t.Fatal(err)
	}
	addr, _ := start(t, "--web.config.file="+good)
	if code, _ := get(t, "http://"+addr+"/metrics", "", ""); code != http.StatusUnauthorized {
		t.Errorf("without credentials: %d, want 401", code)
	}
	if code, body := get(t, "http://"+addr+"/metrics", "prom", "secret"); code != 200 || !strings.Contains(body, "rdma_up") {
		t.Errorf("with credentials: %d", code)
	}

	bad := filepath.Join(dir, "bad.yml")
	if err := os.WriteFile(bad, []byte("tls_server_config:\n  cert_file: /nonexistent\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{bad, filepath.Join(dir, "missing.yml")} {
		err := run(context.Background(), io.Discard, io.Discard, []string{"--web.listen-address=" + freeAddr(t), "--web.config.file=" + f})
		if err == nil || strings.Contains(err.Error(), "\n") || !strings.Contains(err.Error(), f) {
			t.Errorf("config %s: %v, want a one-line error naming it", f, err)
		}
	}
}

// TestPortInUse: an address already taken is one line and a non-zero exit.
func TestPortInUse(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	err = run(context.Background(), io.Discard, io.Discard, []string{"--web.listen-address=" + l.Addr().String()})
	if err == nil || strings.Contains(err.Error(), "\n") || !strings.Contains(err.Error(), "address already in use") {
		t.Errorf("port in use: %v", err)
	}
}
