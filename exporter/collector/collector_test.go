package collector

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/rdmastack/rdmastack/ib"
	"github.com/rdmastack/rdmastack/nldev"
)

var update = flag.Bool("update", false, "rewrite testdata/collector.prom")

// newTest returns a collector of k on the fixture sysfs, registered in a
// pedantic registry (which checks every family's consistency).
func newTest(t *testing.T, k kernel, opts Options) (*Collector, *prometheus.Registry) {
	t.Helper()
	opts.SysfsRoot = filepath.Join("testdata", "sysfs")
	c, err := newCollector(opts, k)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(c)
	return c, reg
}

// gather returns the families by name.
func gather(t *testing.T, reg prometheus.Gatherer) map[string]*dto.MetricFamily {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatalf("Gather: %v", err)
	}
	out := map[string]*dto.MetricFamily{}
	for _, mf := range mfs {
		out[mf.GetName()] = mf
	}
	return out
}

// text renders families as the exposition format, leaving out the
// durations, which change from scrape to scrape.
func text(t *testing.T, mfs map[string]*dto.MetricFamily) string {
	t.Helper()
	var names []string
	for n := range mfs {
		if !strings.HasSuffix(n, "duration_seconds") {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	var b bytes.Buffer
	enc := expfmt.NewEncoder(&b, expfmt.NewFormat(expfmt.TypeTextPlain))
	for _, n := range names {
		if err := enc.Encode(mfs[n]); err != nil {
			t.Fatal(err)
		}
	}
	return b.String()
}

// value is the value of the series of family name with the given labels
// (name=value pairs); ok is false when there is none.
func value(mfs map[string]*dto.MetricFamily, name string, labels ...string) (float64, bool) {
	mf := mfs[name]
	if mf == nil {
		return 0, false
	}
next:
	for _, m := range mf.GetMetric() {
		have := map[string]string{}
		for _, lp := range m.GetLabel() {
			have[lp.GetName()] = lp.GetValue()
		}
		for i := 0; i+1 < len(labels); i += 2 {
			if have[labels[i]] != labels[i+1] {
				continue next
			}
		}
		switch {
		case m.Counter != nil:
			return m.Counter.GetValue(), true
		case m.Gauge != nil:
			return m.Gauge.GetValue(), true
		}
	}
	return 0, false
}

// TestCollect: every family of the two fixture devices, compared with
// testdata/collector.prom (go test -update rewrites it).
func TestCollect(t *testing.T) {
	k := newFakeKernel()
	k.noMon = true
	_, reg := newTest(t, k, Options{})
	got := text(t, gather(t, reg))
	golden := filepath.Join("testdata", "collector.prom")
	if *update {
		if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if got != string(want) {
		t.Errorf("scrape differs from %s (go test -update rewrites it):\n%s", golden, got)
	}
	if problems, err := testutil.GatherAndLint(reg); err != nil || len(problems) > 0 {
		t.Errorf("lint: %v %v", problems, err)
	}
}

// TestCollectValues checks the values a reader of the fixture expects,
// independently of the golden file.
func TestCollectValues(t *testing.T) {
	k := newFakeKernel()
	_, reg := newTest(t, k, Options{})
	mfs := gather(t, reg)
	for _, tt := range []struct {
		name   string
		labels []string
		want   float64
	}{
		{"rdma_up", nil, 1},
		{"rdma_port_state", []string{"device", "mlx5_0", "port", "1"}, 4},
		{"rdma_port_state", []string{"device", "mlx5_1", "port", "1"}, 1},
		{"rdma_port_physical_state", []string{"device", "mlx5_1"}, 3},
		{"rdma_port_rate_bytes_per_second", []string{"device", "mlx5_0"}, 12.5e9},
		{"rdma_port_active_mtu_bytes", []string{"device", "mlx5_1"}, 1024},
		{"rdma_port_max_mtu_bytes", []string{"device", "mlx5_1"}, 4096},
		{"rdma_port_lid", []string{"device", "mlx5_0"}, 0x12},
		{"rdma_port_hw_rx_write_requests_total", []string{"device", "mlx5_0", "port", "1"}, 11},
		{"rdma_port_hw_np_cnp_sent_total", []string{"device", "mlx5_1"}, 5},
		{"rdma_port_hw_lifespan", []string{"device", "mlx5_0"}, 10},
		{"rdma_device_hw_req_cqe_error_total", []string{"device", "mlx5_0"}, 3},
		{"rdma_port_pma_port_xmit_data_bytes_total", []string{"device", "mlx5_0"}, 15015 * 4},
		{"rdma_port_pma_vl15_dropped_total", []string{"device", "mlx5_0"}, 22022},
		{"rdma_port_pma_ext_port_rcv_data_64_bytes_total", []string{"device", "mlx5_0"}, 25025 * 4},
		{"rdma_port_pma_symbol_error_total", []string{"device", "mlx5_1"}, 5},
		{"rdma_resources", []string{"device", "mlx5_0", "type", "qp"}, 5},
		{"rdma_device_info", []string{"device", "mlx5_0", "driver", "mlx5", "bus", "pci", "bus_address", "0000:03:00.0", "node_guid", "0c42:a103:0065:8d48"}, 1},
		{"rdma_port_info", []string{"device", "mlx5_1", "link_layer", "Ethernet", "netdev", "eth1"}, 1},
		{"rdma_device_scrape_errors_total", []string{"device", "mlx5_1"}, 0},
	} {
		got, ok := value(mfs, tt.name, tt.labels...)
		if !ok || got != tt.want {
			t.Errorf("%s%v = %v (present %v), want %v", tt.name, tt.labels, got, ok, tt.want)
		}
	}
	// "N/A (no PMA)" is an absent series, not an error.
	if _, ok := value(mfs, "rdma_port_pma_port_rcv_data_bytes_total", "device", "mlx5_1"); ok {
		t.Error("a counter reading N/A was exported")
	}
	// Without --compat.node-exporter there are no node_ families.
	for n := range mfs {
		if strings.HasPrefix(n, "node_") {
			t.Errorf("%s exported without NodeExporter", n)
		}
	}
}

// TestNodeExporterCompat: with NodeExporter, the node_infiniband_*
// families equal what node_exporter 1.5.0's infiniband collector printed
// for the same sysfs tree (testdata/node_exporter-1.5.0.prom, captured with
// --path.sysfs=testdata/sysfs): names, help, labels and values.
func TestNodeExporterCompat(t *testing.T) {
	_, reg := newTest(t, newFakeKernel(), Options{NodeExporter: true})
	theirs := readProm(t, filepath.Join("testdata", "node_exporter-1.5.0.prom"))
	ours := gather(t, reg)
	n := 0
	for name, mf := range theirs {
		if !strings.HasPrefix(name, "node_infiniband_") {
			continue
		}
		n++
		want := text(t, map[string]*dto.MetricFamily{name: mf})
		got := text(t, map[string]*dto.MetricFamily{name: ours[name]})
		if ours[name] == nil || got != want {
			t.Errorf("%s: ours\n%s\nnode_exporter's\n%s", name, got, want)
		}
	}
	if n < 30 {
		t.Fatalf("only %d node_infiniband families in the fixture", n)
	}
}

// readProm parses an exposition-format file.
func readProm(t *testing.T, path string) map[string]*dto.MetricFamily {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	p := expfmt.NewTextParser(model.LegacyValidation)
	mfs, err := p.TextToMetricFamilies(f)
	if err != nil {
		t.Fatal(err)
	}
	return mfs
}

// TestVanishedMidScrape: a device that is gone by the time its counters
// are read drops out of that scrape whole, and nothing else changes.
func TestVanishedMidScrape(t *testing.T) {
	k := newFakeKernel()
	k.ctrErr[nldev.PortID{Dev: 2, Port: 1}] = fmt.Errorf("get counters: %w", os.ErrNotExist)
	_, reg := newTest(t, k, Options{})
	mfs := gather(t, reg)
	for name, mf := range mfs {
		for _, m := range mf.GetMetric() {
			for _, lp := range m.GetLabel() {
				if lp.GetName() == "device" && lp.GetValue() == "mlx5_1" {
					t.Errorf("%s has a series of the vanished device", name)
				}
			}
		}
	}
	if v, ok := value(mfs, "rdma_port_hw_rx_write_requests_total", "device", "mlx5_0"); !ok || v != 11 {
		t.Errorf("the other device lost its series: %v %v", v, ok)
	}
	if v, _ := value(mfs, "rdma_scrape_errors_total"); v != 0 {
		t.Errorf("a vanished device counted as a scrape error: %v", v)
	}
}

// TestReadErrorsCounted: a device whose counters fail for another reason
// keeps its other series and counts the error.
func TestReadErrorsCounted(t *testing.T) {
	k := newFakeKernel()
	k.ctrErr[nldev.PortID{Dev: 2, Port: 1}] = errors.New("nldev: get counters: no buffer space available")
	_, reg := newTest(t, k, Options{})
	for i := 1; i <= 2; i++ {
		mfs := gather(t, reg)
		if v, _ := value(mfs, "rdma_device_scrape_errors_total", "device", "mlx5_1"); v != float64(i) {
			t.Errorf("scrape %d: errors %v, want %d", i, v, i)
		}
		if _, ok := value(mfs, "rdma_port_state", "device", "mlx5_1"); !ok {
			t.Errorf("scrape %d: the device's other series are gone", i)
		}
	}
	k.listErr = errors.New("device: list: interrupted")
	mfs := gather(t, reg)
	if v, _ := value(mfs, "rdma_scrape_errors_total"); v != 1 {
		t.Errorf("a failed device list is not counted: %v", v)
	}
	if v, _ := value(mfs, "rdma_up"); v != 1 {
		t.Errorf("rdma_up = %v after a failed list, want 1", v)
	}
}

// TestNoRDMA: on a kernel without RDMA the collector answers rdma_up 0 and
// nothing about devices; once RDMA is there, it reports it.
func TestNoRDMA(t *testing.T) {
	k := newFakeKernel()
	k.listErr = fmt.Errorf("device: list: %w", nldev.ErrNoRDMA)
	_, reg := newTest(t, k, Options{})
	mfs := gather(t, reg)
	if v, ok := value(mfs, "rdma_up"); !ok || v != 0 {
		t.Errorf("rdma_up = %v, %v; want 0", v, ok)
	}
	if mfs["rdma_device_info"] != nil {
		t.Error("devices without RDMA")
	}
	k.mu.Lock()
	k.listErr = nil
	k.mu.Unlock()
	if v, _ := value(gather(t, reg), "rdma_up"); v != 1 {
		t.Errorf("rdma_up = %v once RDMA is there", v)
	}
}

// TestOptionalCounters: the named optional counter is enabled once, next
// to the one already enabled; a name no port has is only logged.
func TestOptionalCounters(t *testing.T) {
	k := newFakeKernel()
	var log bytes.Buffer
	_, reg := newTest(t, k, Options{OptionalCounters: []string{"cc_rx_ce_pkts", "no_such"}, Logger: testLogger(&log)})
	gather(t, reg)
	gather(t, reg)
	p := nldev.PortID{Dev: 1, Port: 1}
	if got := k.setOpt[p]; !slices.Equal(got, []uint32{2, 1}) {
		t.Errorf("SetOptionalCounters(%v) = %v, want [2 1] (the enabled one kept)", p, got)
	}
	if len(k.setOpt) != 1 {
		t.Errorf("optional counters set on %d ports, want 1", len(k.setOpt))
	}
	if !strings.Contains(log.String(), "enabled optional counters") || strings.Count(log.String(), "no_such") != 1 {
		t.Errorf("log:\n%s", log.String())
	}
}

// TestQPCounters: auto mode is set on every port not in it, the QP
// counters are exported, and Close puts the mode back.
func TestQPCounters(t *testing.T) {
	k := newFakeKernel()
	qt := ib.QPTypeRC
	k.qps[1] = []nldev.QPCounter{{DevIndex: 1, Port: 1, ID: 7, Mode: nldev.CounterModeAuto, QPType: &qt,
		Counters: []nldev.Counter{{Name: "rx_write_requests", Value: 9}}}}
	c, reg := newTest(t, k, Options{QPCounters: true})
	mfs := gather(t, reg)
	for _, p := range []nldev.PortID{{Dev: 1, Port: 1}, {Dev: 2, Port: 1}} {
		if k.mode[p].Mode != nldev.CounterModeAuto {
			t.Errorf("port %v not in auto mode", p)
		}
	}
	if v, ok := value(mfs, "rdma_qp_counter_hw_rx_write_requests_total", "device", "mlx5_0", "counter_id", "7", "qp_type", "RC"); !ok || v != 9 {
		t.Errorf("QP counter = %v, %v", v, ok)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	for p, m := range k.mode {
		if m.Mode == nldev.CounterModeAuto {
			t.Errorf("port %v still in auto mode after Close", p)
		}
	}
	if !k.closed {
		t.Error("Close did not close the kernel sockets")
	}
}

// TestMonitorEvents: monitor events are counted by type, and a port state
// change between two scrapes that an event lets the collector see counts.
func TestMonitorEvents(t *testing.T) {
	k := newFakeKernel()
	_, reg := newTest(t, k, Options{})
	mfs := gather(t, reg)
	if v, _ := value(mfs, "rdma_port_state_changes_total", "device", "mlx5_1"); v != 0 {
		t.Fatalf("changes before any: %v", v)
	}
	// The port comes up and goes down again; an event arrives while it is up.
	k.mu.Lock()
	k.snap.Devices[1].Ports[0].State = ib.PortActive
	k.mu.Unlock()
	k.evs <- []nldev.Event{{Type: nldev.EventNetdevAttach, DevIndex: 2}}
	waitFor(t, func() bool {
		v, _ := value(gather(t, reg), "rdma_monitor_events_total", "type", nldev.EventNetdevAttach.String())
		return v == 1
	})
	k.mu.Lock()
	k.snap.Devices[1].Ports[0].State = ib.PortDown
	k.mu.Unlock()
	mfs = gather(t, reg)
	if v, _ := value(mfs, "rdma_port_state_changes_total", "device", "mlx5_1"); v != 2 {
		t.Errorf("state changes = %v, want 2 (up at the event, down at the scrape)", v)
	}
	if v, _ := value(mfs, "rdma_monitor_up"); v != 1 {
		t.Errorf("rdma_monitor_up = %v", v)
	}
}

// TestNoMonitor: without monitor events rdma_monitor_up is 0.
func TestNoMonitor(t *testing.T) {
	k := newFakeKernel()
	k.noMon = true
	_, reg := newTest(t, k, Options{})
	if v, ok := value(gather(t, reg), "rdma_monitor_up"); !ok || v != 0 {
		t.Errorf("rdma_monitor_up = %v, %v; want 0", v, ok)
	}
}

// TestNoVerbsAccess: a verbs device the exporter may not open costs the
// MTUs only, and is not an error.
func TestNoVerbsAccess(t *testing.T) {
	k := newFakeKernel()
	k.verbsErr = fmt.Errorf("open /dev/infiniband/uverbs0: %w", os.ErrPermission)
	_, reg := newTest(t, k, Options{})
	mfs := gather(t, reg)
	if mfs["rdma_port_active_mtu_bytes"] != nil {
		t.Error("MTUs without verbs access")
	}
	if v, _ := value(mfs, "rdma_device_scrape_errors_total", "device", "mlx5_0"); v != 0 {
		t.Errorf("no access counted as an error: %v", v)
	}
}

// waitFor polls cond until it holds; the test's deadline bounds it.
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	for !cond() {
		time.Sleep(time.Millisecond)
	}
}

// TestConcurrentScrapes: scrapes from several goroutines at once, while
// monitor events arrive and Close comes at the end, each see a whole,
// consistent scrape (the race detector watches the shared state).
func TestConcurrentScrapes(t *testing.T) {
	k := newFakeKernel()
	c, reg := newTest(t, k, Options{NodeExporter: true})
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 20; i++ {
				mfs, err := reg.Gather()
				if err != nil {
					t.Errorf("Gather: %v", err)
					return
				}
				if n := len(mfs); n < 40 {
					t.Errorf("a concurrent scrape had %d families", n)
					return
				}
			}
		}()
	}
	for i := 0; i < 20; i++ {
		k.evs <- []nldev.Event{{Type: nldev.EventRegister, DevIndex: 1}}
	}
	wg.Wait()
	waitFor(t, func() bool {
		v, _ := value(gather(t, reg), "rdma_monitor_events_total", "type", "REGISTER")
		return v == 20
	})
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
}
