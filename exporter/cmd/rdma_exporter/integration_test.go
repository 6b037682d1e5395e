package main

import (
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rdmastack/rdmastack/internal/testkit/rxetest"
	"github.com/rdmastack/rdmastack/internal/testkit/testenv"
)

// startUnprivileged runs this test binary as the exporter, as user nobody
// with no capabilities at all, and returns its address once it answers.
func startUnprivileged(t *testing.T, args ...string) string {
	t.Helper()
	testenv.RequireRDMA(t)
	addr := freeAddr(t)
	cmd := exec.Command(testenv.Oracle(t, "setpriv"), append([]string{"--reuid=65534", "--regid=65534", "--clear-groups",
		"--inh-caps=-all", "--bounding-set=-all", os.Args[0], "--web.listen-address=" + addr}, args...)...)
	cmd.Env = append(os.Environ(), "RDMA_EXPORTER_AS_MAIN=1")
	logs := &testenv.Buffer{}
	cmd.Stdout, cmd.Stderr = logs, logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Signal(os.Interrupt)
		if err := cmd.Wait(); err != nil {
			t.Errorf("the exporter did not end cleanly on SIGINT: %v\n%s", err, logs)
		}
	})
	testenv.WaitFor(t, "the exporter to answer", func() bool {
		resp, err := httpGet("http://" + addr + "/metrics")
		return err == nil && resp != ""
	})
	return addr
}

// TestIntegrationUnprivilegedPromtool: run as nobody without capabilities,
// the exporter reports every device and its counters, and
// "promtool check metrics" finds nothing wrong with its output.
func TestIntegrationUnprivilegedPromtool(t *testing.T) {
	addr := startUnprivileged(t, "--compat.node-exporter")
	body, err := httpGet("http://" + addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	devs := rxetest.Devices(t)
	for _, d := range devs {
		for _, want := range []string{
			`rdma_device_info{bus="",bus_address="",device="` + d.Name + `",driver="rxe"`,
			`rdma_port_hw_sent_pkts_total{device="` + d.Name + `",port="1"}`,
			`rdma_port_active_mtu_bytes{device="` + d.Name + `",port="1"}`,
			`node_infiniband_state_id{device="` + d.Name + `",port="1"} 4`,
		} {
			if !strings.Contains(body, want) {
				t.Errorf("unprivileged scrape lacks %s", want)
			}
		}
	}
	if !strings.Contains(body, "rdma_up 1") {
		t.Error("unprivileged: rdma_up is not 1")
	}
	cmd := exec.Command(testenv.Oracle(t, "promtool"), "check", "metrics")
	cmd.Stdin = strings.NewReader(body)
	out, err := cmd.CombinedOutput()
	if err != nil || len(strings.TrimSpace(string(out))) > 0 {
		t.Errorf("promtool check metrics: %v\n%s", err, out)
	}
}

// TestIntegrationPrometheus: Debian's Prometheus scrapes the exporter
// (unprivileged) every second; its query API shows a series per device,
// and rxe0's packet counters there move by what an ibv_rc_pingpong pair
// sent.
func TestIntegrationPrometheus(t *testing.T) {
	addr := startUnprivileged(t)
	dir := t.TempDir()
	cfg := filepath.Join(dir, "prometheus.yml")
	if err := os.WriteFile(cfg, fmt.Appendf(nil, "global:\n  scrape_interval: 1s\nscrape_configs:\n  - job_name: rdma\n    static_configs:\n      - targets: [%q]\n", addr), 0o644); err != nil {
		t.Fatal(err)
	}
	promAddr := freeAddr(t)
	testenv.Start(t, "prometheus", "--config.file="+cfg, "--storage.tsdb.path="+filepath.Join(dir, "data"),
		"--web.listen-address="+promAddr)
	query := func(q string) (float64, bool) {
		body, err := httpGet("http://" + promAddr + "/api/v1/query?query=" + url.QueryEscape(q))
		if err != nil {
			return 0, false
		}
		var r struct {
			Status string
			Data   struct {
				Result []struct {
					Value [2]any
				}
			}
		}
		if json.Unmarshal([]byte(body), &r) != nil || r.Status != "success" || len(r.Data.Result) != 1 {
			return 0, false
		}
		s, _ := r.Data.Result[0].Value[1].(string)
		v, err := strconv.ParseFloat(s, 64)
		return v, err == nil
	}
	devs := rxetest.Devices(t)
	testenv.Eventually(t, 90*time.Second, "Prometheus to scrape the exporter", func(error) bool { return true }, func() error {
		if v, ok := query(`up{job="rdma"}`); !ok || v != 1 {
			return fmt.Errorf("up = %v, %v", v, ok)
		}
		if v, ok := query(`count(rdma_device_info{job="rdma"})`); !ok || int(v) != len(devs) {
			return fmt.Errorf("%v devices in Prometheus, want %d", v, len(devs))
		}
		return nil
	})
	const sentQ = `rdma_port_hw_sent_pkts_total{job="rdma",device="rxe0",port="1"}`
	before, ok := query(sentQ)
	if !ok {
		t.Fatalf("Prometheus has no %s", sentQ)
	}
	const iters = 50
	testenv.RCPingpong(t, "rxe0", 18712, iters)
	testenv.Eventually(t, 30*time.Second, "Prometheus to see the packets", func(error) bool { return true }, func() error {
		if v, _ := query(sentQ); v < before+2*iters {
			return fmt.Errorf("sent_pkts %v, want at least %v", v, before+2*iters)
		}
		return nil
	})
}

// TestIntegrationSIWPromtool: on the siw guest's iWARP devices, run as
// nobody without capabilities, the exporter reports every device and port
// (driver siw, no hardware counters to report), and "promtool check
// metrics" finds nothing wrong with its output.
func TestIntegrationSIWPromtool(t *testing.T) {
	e := testenv.SIW(t)
	addr := startUnprivileged(t, "--compat.node-exporter")
	body, err := httpGet("http://" + addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	for _, dev := range []string{e.Dev, e.PeerDev} {
		for _, want := range []string{
			`rdma_device_info{bus="",bus_address="",device="` + dev + `",driver="siw"`,
			`rdma_port_info{device="` + dev + `",link_layer="Ethernet",netdev="`,
			`rdma_port_active_mtu_bytes{device="` + dev + `",port="1"}`,
			`node_infiniband_state_id{device="` + dev + `",port="1"} 4`,
			`rdma_device_scrape_errors_total{device="` + dev + `"} 0`,
		} {
			if !strings.Contains(body, want) {
				t.Errorf("unprivileged scrape lacks %s", want)
			}
		}
	}
	if !strings.Contains(body, "rdma_up 1") || !strings.Contains(body, "rdma_scrape_errors_total 0") {
		t.Error("unprivileged: rdma_up is not 1, or a scrape failed")
	}
	cmd := exec.Command(testenv.Oracle(t, "promtool"), "check", "metrics")
	cmd.Stdin = strings.NewReader(body)
	out, err := cmd.CombinedOutput()
	if err != nil || len(strings.TrimSpace(string(out))) > 0 {
		t.Errorf("promtool check metrics: %v\n%s", err, out)
	}
}
