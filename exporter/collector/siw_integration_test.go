package collector

import (
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"

	"github.com/rdmastack/rdmastack/internal/sysfs"
	"github.com/rdmastack/rdmastack/internal/testkit/testenv"
	"github.com/rdmastack/rdmastack/nldev"
)

// TestIntegrationSIWCollect scrapes the siw guest's iWARP devices, with
// node_exporter's families and the QP counters asked for, while
// ibv_rc_pingpong holds objects on Dev, and compares every series with
// what iproute2, rdma-core and sysfs say: the device's identity (driver
// siw, node type rnic, protocol iw), each port's link layer, netdev,
// states, rate and MTUs, no LID (not InfiniBand), the resource summary,
// and exactly the counters the kernel offers: those "rdma statistic"
// shows and the number files of sysfs' hw_counters, ports/N/counters and
// counters_ext (siw allocates no hardware counters and has no PMA, so
// there are none, and no QP counter either). Nothing counts as a scrape
// error, and the output passes Prometheus' lint.
func TestIntegrationSIWCollect(t *testing.T) {
	e := testenv.SIW(t)
	testenv.StartRCServer(t, e.Dev, 0, 18721)
	_, reg := newLive(t, Options{NodeExporter: true, QPCounters: true})
	mfs := gather(t, reg)
	rdma := testenv.Oracle(t, "rdma")

	var devs []struct {
		Ifname       string `json:"ifname"`
		NodeType     string `json:"node_type"`
		NodeGUID     string `json:"node_guid"`
		SysImageGUID string `json:"sys_image_guid"`
		FW           string `json:"fw"`
	}
	mustJSON(t, testenv.Run(t, rdma, "-j", "dev"), &devs)
	if names := func() []string {
		var n []string
		for _, d := range devs {
			n = append(n, d.Ifname)
		}
		return n
	}(); !slices.Contains(names, e.Dev) || !slices.Contains(names, e.PeerDev) {
		t.Fatalf("rdma dev lists %q, want %s and %s", names, e.Dev, e.PeerDev)
	}
	for _, d := range devs {
		sys := filepath.Join("/sys/class/infiniband", d.Ifname)
		board, _ := sysfs.ReadString(filepath.Join(sys, "board_id"))
		hca, _ := sysfs.ReadString(filepath.Join(sys, "hca_type"))
		fw, _ := sysfs.ReadString(filepath.Join(sys, "fw_ver"))
		if d.FW != fw {
			t.Errorf("%s: rdma dev says fw %q, sysfs %q", d.Ifname, d.FW, fw)
		}
		if v, ok := value(mfs, "rdma_device_info", "device", d.Ifname, "driver", "siw", "node_type", d.NodeType, "protocol", "iw",
			"node_guid", d.NodeGUID, "sys_image_guid", d.SysImageGUID, "firmware_version", d.FW); !ok || v != 1 || d.NodeType != "rnic" {
			t.Errorf("no rdma_device_info for %s as rdma dev shows it (%+v)", d.Ifname, d)
		}
		if v, ok := value(mfs, "node_infiniband_info", "device", d.Ifname, "board_id", board, "firmware_version", fw, "hca_type", hca); !ok || v != 1 {
			t.Errorf("no node_infiniband_info for %s (board %q, fw %q, hca %q)", d.Ifname, board, fw, hca)
		}
		for _, name := range []string{"rdma_device_scrape_errors_total"} {
			if v, ok := value(mfs, name, "device", d.Ifname); !ok || v != 0 {
				t.Errorf("%s %s: %v, %v", d.Ifname, name, v, ok)
			}
		}
		ents, _ := os.ReadDir(filepath.Join(sys, "ports", "1"))
		var files []string
		for _, ent := range ents {
			files = append(files, ent.Name())
		}
		t.Logf("%s: ports/1 holds %q; sysfs hw_counters: %v", d.Ifname, files, func() bool { _, err := os.Stat(filepath.Join(sys, "hw_counters")); return err == nil }())
		if got, want := counterSeries(mfs, d.Ifname), siwCounters(t, rdma, d.Ifname); !slices.Equal(got, want) {
			t.Errorf("%s: counter families (-kernel +exporter):\n%s", d.Ifname, cmp.Diff(want, got))
		}
	}
	if n := len(mfs["rdma_device_info"].GetMetric()); n != len(devs) {
		t.Errorf("%d devices exported, rdma dev lists %d", n, len(devs))
	}
	if mf := mfs["rdma_port_lid"]; mf != nil {
		t.Errorf("rdma_port_lid on iWARP ports: %v", mf)
	}
	if mf := mfs["rdma_qp_counter_hw_rx_write_requests_total"]; mf != nil {
		t.Errorf("QP counters on siw: %v", mf)
	}

	var links []struct {
		Ifname, State, Netdev string
		PhysicalState         string `json:"physical_state"`
		Port                  int
	}
	mustJSON(t, testenv.Run(t, rdma, "-j", "link"), &links)
	states := map[string]float64{"DOWN": 1, "INIT": 2, "ARMED": 3, "ACTIVE": 4}
	phys := map[string]float64{"SLEEP": 1, "POLLING": 2, "DISABLED": 3, "LINK_UP": 5}
	mtus := mtusOf(t)
	for _, l := range links {
		port := strconv.Itoa(l.Port)
		psys := filepath.Join("/sys/class/infiniband", l.Ifname, "ports", port)
		ll, err := sysfs.ReadString(filepath.Join(psys, "link_layer"))
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := value(mfs, "rdma_port_info", "device", l.Ifname, "port", port, "netdev", l.Netdev, "link_layer", ll); !ok {
			t.Errorf("%s/%s: no rdma_port_info with netdev %s and link layer %s", l.Ifname, port, l.Netdev, ll)
		}
		for _, name := range []string{"rdma_port_state", "node_infiniband_state_id"} {
			if v, _ := value(mfs, name, "device", l.Ifname, "port", port); v != states[l.State] || v == 0 {
				t.Errorf("%s/%s: %s %v, rdma link says %s", l.Ifname, port, name, v, l.State)
			}
		}
		for _, name := range []string{"rdma_port_physical_state", "node_infiniband_physical_state_id"} {
			if v, _ := value(mfs, name, "device", l.Ifname, "port", port); v != phys[l.PhysicalState] || v == 0 {
				t.Errorf("%s/%s: %s %v, rdma link says %s", l.Ifname, port, name, v, l.PhysicalState)
			}
		}
		for _, name := range []string{"rdma_port_rate_bytes_per_second", "node_infiniband_rate_bytes_per_second"} {
			if v, ok := value(mfs, name, "device", l.Ifname, "port", port); !ok || v <= 0 {
				t.Errorf("%s/%s: %s %v, %v", l.Ifname, port, name, v, ok)
			}
		}
		want := mtus[l.Ifname+"/"+port]
		for i, name := range []string{"rdma_port_active_mtu_bytes", "rdma_port_max_mtu_bytes"} {
			if v, _ := value(mfs, name, "device", l.Ifname, "port", port); strconv.Itoa(int(v)) != want[i] {
				t.Errorf("%s/%s: %s %v, ibv_devinfo says %s", l.Ifname, port, name, v, want[i])
			}
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
	if v, _ := value(mfs, "rdma_resources", "device", e.Dev, "type", "qp"); v < 1 {
		t.Errorf("%s: %v QPs while ibv_rc_pingpong holds one", e.Dev, v)
	}
	if problems, err := testutil.GatherAndLint(reg); err != nil || len(problems) > 0 {
		t.Errorf("lint: %v %v", problems, err)
	}
	if v, _ := value(mfs, "rdma_scrape_errors_total"); v != 0 {
		t.Errorf("scrape errors: %v", v)
	}
}

// counterSeries lists the kernel-named counter families with a series of
// dev, sorted.
func counterSeries(mfs map[string]*dto.MetricFamily, dev string) []string {
	var out []string
	for name := range mfs {
		for _, k := range []counterKind{portHW, devHW, qpHW, pma, pmaExt} {
			if strings.HasPrefix(name, k.prefix+"_") {
				if _, ok := value(mfs, name, "device", dev); ok && !slices.Contains(out, name) {
					out = append(out, name)
				}
			}
		}
	}
	slices.Sort(out)
	return out
}

// siwCounters lists the counter families the kernel offers for dev, as
// the exporter names them: what "rdma statistic show link DEV" shows for
// each port and the number files of its sysfs counter directories.
func siwCounters(t *testing.T, rdma, dev string) []string {
	t.Helper()
	set := map[string]bool{}
	out, ok := testenv.Output(t, rdma, "-j", "statistic", "show", "link", dev)
	if ok && strings.TrimSpace(out) != "" {
		var stats []map[string]any
		mustJSON(t, []byte(out), &stats)
		for _, s := range stats {
			for k := range s {
				if k != "ifname" && k != "port" {
					name, _ := counterFamily(portHW.prefix, k)
					set[name] = true
				}
			}
		}
	}
	sys := filepath.Join("/sys/class/infiniband", dev)
	numbers := func(dir string, k counterKind) {
		ents, _ := os.ReadDir(dir)
		for _, ent := range ents {
			b, err := os.ReadFile(filepath.Join(dir, ent.Name()))
			if err != nil || !ent.Type().IsRegular() {
				continue
			}
			if _, err := strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64); err != nil {
				continue
			}
			n := ent.Name()
			switch n {
			case "port_rcv_data", "port_xmit_data", "port_rcv_data_64", "port_xmit_data_64":
				if k.prefix != portHW.prefix {
					n += "_bytes" // what addPMA names the PMA's 4-octet words
				}
			}
			name, _ := counterFamily(k.prefix, n)
			set[name] = true
		}
	}
	numbers(filepath.Join(sys, "hw_counters"), devHW)
	ports, _ := os.ReadDir(filepath.Join(sys, "ports"))
	for _, p := range ports {
		numbers(filepath.Join(sys, "ports", p.Name(), "counters"), pma)
		numbers(filepath.Join(sys, "ports", p.Name(), "counters_ext"), pmaExt)
		numbers(filepath.Join(sys, "ports", p.Name(), "hw_counters"), portHW)
	}
	return slices.Sorted(maps.Keys(set))
}

// mtusOf reads every device's ports' active and max MTUs from ibv_devinfo
// -v, by "DEV/PORT".
func mtusOf(t *testing.T) map[string][2]string {
	t.Helper()
	out := string(testenv.Run(t, testenv.Oracle(t, "ibv_devinfo"), "-v"))
	m := map[string][2]string{}
	var dev, port, max string
	for _, l := range strings.Split(out, "\n") {
		f := strings.Fields(l)
		switch {
		case len(f) == 2 && f[0] == "hca_id:":
			dev = f[1]
		case len(f) == 2 && f[0] == "port:":
			port = f[1]
		case len(f) >= 2 && f[0] == "max_mtu:":
			max = f[1]
		case len(f) >= 2 && f[0] == "active_mtu:":
			m[dev+"/"+port] = [2]string{f[1], max}
		}
	}
	if len(m) == 0 {
		t.Fatalf("ibv_devinfo -v printed no MTU:\n%s", out)
	}
	return m
}
