package collector

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/rdmastack/rdmastack/internal/testkit/rxetest"
	"github.com/rdmastack/rdmastack/internal/testkit/testenv"
	"github.com/rdmastack/rdmastack/nldev"
)

// newLive returns a collector of the VM's kernel in a pedantic registry.
func newLive(t *testing.T, opts Options) (*Collector, *prometheus.Registry) {
	t.Helper()
	testenv.RequireRDMA(t)
	c, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := c.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(c)
	return c, reg
}

// TestIntegrationCollect compares a scrape with what iproute2 and
// rdma-core say about the same devices: every device, every port's state,
// every hardware counter rdma statistic shows, the resource summary and the
// active MTU; and the output passes Prometheus' lint.
func TestIntegrationCollect(t *testing.T) {
	_, reg := newLive(t, Options{})
	mfs := gather(t, reg)
	rdma := testenv.Oracle(t, "rdma")

	var devs []struct {
		Ifname   string `json:"ifname"`
		NodeGUID string `json:"node_guid"`
	}
	mustJSON(t, testenv.Run(t, rdma, "-j", "dev"), &devs)
	if len(devs) == 0 {
		t.Fatal("rdma dev lists no device")
	}
	for _, d := range devs {
		if v, ok := value(mfs, "rdma_device_info", "device", d.Ifname, "node_guid", d.NodeGUID, "driver", "rxe"); !ok || v != 1 {
			t.Errorf("no rdma_device_info for %s (%s)", d.Ifname, d.NodeGUID)
		}
	}
	if n := len(mfs["rdma_device_info"].GetMetric()); n != len(devs) {
		t.Errorf("%d devices exported, rdma dev lists %d", n, len(devs))
	}

	var links []struct {
		Ifname, State, PhysicalState, Netdev string
		Port                                 int
	}
	mustJSON(t, testenv.Run(t, rdma, "-j", "link"), &links)
	states := map[string]float64{"DOWN": 1, "INIT": 2, "ARMED": 3, "ACTIVE": 4}
	for _, l := range links {
		port := strconv.Itoa(l.Port)
		if v, _ := value(mfs, "rdma_port_state", "device", l.Ifname, "port", port); v != states[l.State] {
			t.Errorf("%s/%s: rdma_port_state %v, rdma link says %s", l.Ifname, port, v, l.State)
		}
		if _, ok := value(mfs, "rdma_port_info", "device", l.Ifname, "port", port, "netdev", l.Netdev, "link_layer", "Ethernet"); !ok {
			t.Errorf("%s/%s: no rdma_port_info with netdev %s", l.Ifname, port, l.Netdev)
		}
		if v, ok := value(mfs, "rdma_port_rate_bytes_per_second", "device", l.Ifname, "port", port); !ok || v <= 0 {
			t.Errorf("%s/%s: rate %v, %v", l.Ifname, port, v, ok)
		}
	}

	var stats []map[string]any
	mustJSON(t, testenv.Run(t, rdma, "-j", "statistic", "show"), &stats)
	for _, s := range stats {
		dev, port := s["ifname"].(string), fmt.Sprint(s["port"])
		n := 0
		for k := range s {
			if k == "ifname" || k == "port" {
				continue
			}
			n++
			name, _ := counterFamily(portHW.prefix, k)
			if _, ok := value(mfs, name, "device", dev, "port", port); !ok {
				t.Errorf("%s/%s: rdma statistic shows %s, the exporter has no %s", dev, port, k, name)
			}
		}
		if n == 0 {
			t.Errorf("%s/%s: rdma statistic shows no counter", dev, port)
		}
	}

	c, err := nldev.Dial()
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	sums, err := c.ResourceSummary()
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range sums {
		for _, rc := range s.Counts {
			if v, ok := value(mfs, "rdma_resources", "device", s.DevName, "type", string(rc.Type)); !ok || v != float64(rc.Count) {
				t.Errorf("%s %s: rdma_resources %v (%v), the kernel says %d", s.DevName, rc.Type, v, ok, rc.Count)
			}
		}
	}

	// ibv_devinfo prints "active_mtu: 1024 (3)" for each port.
	out := string(testenv.Run(t, testenv.Oracle(t, "ibv_devinfo"), "-d", devs[0].Ifname))
	m := regexp.MustCompile(`active_mtu:\s+(\d+)`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("ibv_devinfo printed no active_mtu:\n%s", out)
	}
	if v, _ := value(mfs, "rdma_port_active_mtu_bytes", "device", devs[0].Ifname, "port", "1"); strconv.Itoa(int(v)) != m[1] {
		t.Errorf("%s: active MTU %v, ibv_devinfo says %s", devs[0].Ifname, v, m[1])
	}
	if problems, err := testutil.GatherAndLint(reg); err != nil || len(problems) > 0 {
		t.Errorf("lint: %v %v", problems, err)
	}
	if v, _ := value(mfs, "rdma_scrape_errors_total"); v != 0 {
		t.Errorf("scrape errors: %v", v)
	}
}

// TestIntegrationCountersMove: the port counters of rxe0 move by at least
// what an ibv_rc_pingpong pair on it sent and received.
func TestIntegrationCountersMove(t *testing.T) {
	_, reg := newLive(t, Options{})
	read := func() (sent, rcvd float64) {
		mfs := gather(t, reg)
		sent, _ = value(mfs, "rdma_port_hw_sent_pkts_total", "device", "rxe0", "port", "1")
		rcvd, _ = value(mfs, "rdma_port_hw_rcvd_pkts_total", "device", "rxe0", "port", "1")
		return sent, rcvd
	}
	sent0, rcvd0 := read()
	const iters = 50
	testenv.RCPingpong(t, "rxe0", 18711, iters)
	sent1, rcvd1 := read()
	// Each side sends iters messages; both sides are on rxe0.
	if sent1-sent0 < 2*iters || rcvd1-rcvd0 < 2*iters {
		t.Errorf("after %d round trips on rxe0: sent_pkts +%v, rcvd_pkts +%v; want at least %d each",
			iters, sent1-sent0, rcvd1-rcvd0, 2*iters)
	}
}

// TestIntegrationDeviceChanges: a device added, renamed and deleted between
// scrapes shows as it is in the next scrape, and nothing else changes.
func TestIntegrationDeviceChanges(t *testing.T) {
	_, reg := newLive(t, Options{})
	before := len(gather(t, reg)["rdma_device_info"].GetMetric())
	c, err := nldev.Dial()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() }) // after the device's own cleanup
	testenv.Dummy(t, "rdmstexp0")
	if err := c.AddLink("rdmstexp0", nldev.LinkRXE, "rdmstexp0"); err != nil {
		t.Fatal(err)
	}
	d, err := c.DeviceByName("rdmstexp0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := c.DeleteLink(d.Index); err != nil && !errors.Is(err, os.ErrNotExist) {
			t.Errorf("delete the test device: %v", err)
		}
	})
	has := func(name string) bool {
		_, ok := value(gather(t, reg), "rdma_port_hw_sent_pkts_total", "device", name)
		return ok
	}
	if !has("rdmstexp0") {
		t.Fatal("an added device is not in the next scrape")
	}
	if err := c.Rename(d.Index, "rdmstexp1"); err != nil {
		t.Fatal(err)
	}
	mfs := gather(t, reg)
	if _, ok := value(mfs, "rdma_device_info", "device", "rdmstexp1"); !ok {
		t.Error("a renamed device is not in the next scrape under its new name")
	}
	if _, ok := value(mfs, "rdma_device_info", "device", "rdmstexp0"); ok {
		t.Error("a renamed device is still there under its old name")
	}
	if err := c.DeleteLink(d.Index); err != nil {
		t.Fatal(err)
	}
	mfs = gather(t, reg)
	for name, mf := range mfs {
		for _, m := range mf.GetMetric() {
			for _, lp := range m.GetLabel() {
				if lp.GetName() == "device" && strings.HasPrefix(lp.GetValue(), "rdmstexp") {
					t.Errorf("%s still has a series of the deleted device", name)
				}
			}
		}
	}
	if after := len(mfs["rdma_device_info"].GetMetric()); after != before {
		t.Errorf("%d devices after the test's device went, %d before", after, before)
	}
}

// TestIntegrationDeleteDuringScrapes: scrapes that run while a device is
// added and deleted again and again never fail and never show a device
// half: each scrape either has all of the device's port series or none.
func TestIntegrationDeleteDuringScrapes(t *testing.T) {
	_, reg := newLive(t, Options{})
	c, err := nldev.Dial()
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	testenv.Dummy(t, "rdmstexp2")
	stop := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		defer close(done)
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			if err := c.AddLink("rdmstexp2", nldev.LinkRXE, "rdmstexp2"); err != nil {
				done <- err
				return
			}
			d, err := c.DeviceByName("rdmstexp2")
			if err == nil {
				err = c.DeleteLink(d.Index)
			}
			if err != nil {
				done <- err
				return
			}
		}
	}()
	for i := 0; i < 40; i++ {
		mfs, err := reg.Gather()
		if err != nil {
			t.Fatalf("scrape %d: %v", i, err)
		}
		byName := map[string]int{}
		for _, mf := range mfs {
			for _, m := range mf.GetMetric() {
				for _, lp := range m.GetLabel() {
					if lp.GetName() == "device" && lp.GetValue() == "rdmstexp2" {
						byName[mf.GetName()]++
					}
				}
			}
		}
		if len(byName) > 0 {
			for _, f := range []string{"rdma_device_info", "rdma_port_state", "rdma_port_hw_sent_pkts_total", "rdma_device_scrape_errors_total"} {
				if byName[f] != 1 {
					t.Errorf("scrape %d has part of the device: %v", i, byName)
					break
				}
			}
		}
	}
	close(stop)
	if err := <-done; err != nil {
		t.Fatalf("add/delete loop: %v", err)
	}
	testenv.WaitFor(t, "the test device gone", func() bool {
		_, err := c.DeviceByName("rdmstexp2")
		return errors.Is(err, os.ErrNotExist)
	})
}

func mustJSON(t *testing.T, b []byte, v any) {
	t.Helper()
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%v\n%s", err, b)
	}
}

// TestIntegrationMonitorAndPortState: a port whose netdev goes down and up
// again counts two state changes; on 6.12 and later the RDMA monitor's
// events are counted (REGISTER when a device is added), before 6.12
// rdma_monitor_up says there are none.
func TestIntegrationMonitorAndPortState(t *testing.T) {
	_, reg := newLive(t, Options{})
	c, err := nldev.Dial()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	sys, err := c.System()
	if err != nil {
		t.Fatal(err)
	}
	monitor := sys.Monitor != nil && *sys.Monitor
	if monitor {
		testenv.WaitFor(t, "the exporter to subscribe to monitor events", func() bool {
			v, _ := value(gather(t, reg), "rdma_monitor_up")
			return v == 1
		})
	} else if v, ok := value(gather(t, reg), "rdma_monitor_up"); !ok || v != 0 {
		t.Errorf("no RDMA monitor on %s, but rdma_monitor_up = %v, %v", testenv.KernelRelease(), v, ok)
	}
	testenv.Dummy(t, "rdmstexp3")
	if err := c.AddLink("rdmstexp3", nldev.LinkRXE, "rdmstexp3"); err != nil {
		t.Fatal(err)
	}
	d, err := c.DeviceByName("rdmstexp3")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := c.DeleteLink(d.Index); err != nil {
			t.Errorf("delete the test device: %v", err)
		}
	})
	state := func() (float64, float64) {
		mfs := gather(t, reg)
		s, _ := value(mfs, "rdma_port_state", "device", "rdmstexp3", "port", "1")
		n, _ := value(mfs, "rdma_port_state_changes_total", "device", "rdmstexp3", "port", "1")
		return s, n
	}
	testenv.WaitFor(t, "the new port ACTIVE", func() bool { s, _ := state(); return s == 4 })
	_, base := state()
	ip := testenv.Oracle(t, "ip")
	testenv.Run(t, ip, "link", "set", "rdmstexp3", "down")
	testenv.WaitFor(t, "the port DOWN", func() bool { s, _ := state(); return s == 1 })
	testenv.Run(t, ip, "link", "set", "rdmstexp3", "up")
	testenv.WaitFor(t, "the port ACTIVE again", func() bool { s, _ := state(); return s == 4 })
	if _, n := state(); n != base+2 {
		t.Errorf("state changes %v after down and up, want %v", n, base+2)
	}
	if monitor {
		testenv.WaitFor(t, "a REGISTER event counted", func() bool {
			v, _ := value(gather(t, reg), "rdma_monitor_events_total", "type", "REGISTER")
			return v >= 1
		})
	}
}

// TestIntegrationQPCountersAndOptional: with QPCounters every port goes
// into auto mode by QP type, as iproute2 then reports it, and Close puts
// each back; an optional counter no port has (rxe has none) is logged
// once and changes nothing.
func TestIntegrationQPCountersAndOptional(t *testing.T) {
	testenv.RequireRDMA(t)
	rdma := testenv.Oracle(t, "rdma")
	mode := func() string { return string(testenv.Run(t, rdma, "statistic", "qp", "mode")) }
	before := mode()
	if strings.Contains(before, " on") {
		t.Fatalf("a port is in auto mode before the test:\n%s", before)
	}
	var log testenv.Buffer
	c, reg := newLive(t, Options{QPCounters: true, OptionalCounters: []string{"cc_rx_ce_pkts"}, Logger: testLogger(&log)})
	gather(t, reg)
	gather(t, reg)
	during := mode()
	for _, d := range rxetestDevices(t) {
		if !slices.ContainsFunc(strings.Split(during, "\n"), func(l string) bool {
			return strings.Contains(l, " "+d+"/1 ") && strings.Contains(l, "auto type on")
		}) {
			t.Errorf("%s/1 not in auto mode by type during the scrapes:\n%s", d, during)
		}
	}
	if n := strings.Count(log.String(), "no port has this optional counter"); n != 1 {
		t.Errorf("the missing optional counter was logged %d times:\n%s", n, log.String())
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if after := mode(); after != before {
		t.Errorf("QP counter mode after Close:\n%s\nbefore:\n%s", after, before)
	}
}

// rxetestDevices names the kernel's RDMA devices.
func rxetestDevices(t *testing.T) []string {
	var names []string
	for _, d := range rxetest.Devices(t) {
		names = append(names, d.Name)
	}
	return names
}
