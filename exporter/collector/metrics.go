package collector

import (
	"fmt"
	"strings"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
)

const namespace = "rdma"

// desc builds a fixed family of the collector.
func desc(name, help string, labels ...string) *prometheus.Desc {
	return prometheus.NewDesc(namespace+"_"+name, help, labels, nil)
}

// The fixed families; the hardware counters' families are made as the
// kernel names them (see counterDescs).
var (
	upDesc          = desc("up", "1 when the kernel has RDMA (RDMA netlink answers), 0 when it has none.")
	monitorUpDesc   = desc("monitor_up", "1 while the exporter receives RDMA monitor events (Linux 6.12 and later), 0 otherwise.")
	monitorEvDesc   = desc("monitor_events_total", "RDMA monitor events received, by type.", "type")
	scrapeDurDesc   = desc("scrape_duration_seconds", "How long the whole scrape of the RDMA collector took.")
	scrapeErrDesc   = desc("scrape_errors_total", "Scrapes in which reading something other than one device failed (the device list, the resource summary).")
	devDurDesc      = desc("device_scrape_duration_seconds", "How long reading one device took in this scrape (its share of the batched netlink requests excluded).", "device")
	devErrDesc      = desc("device_scrape_errors_total", "Reads of the device that failed, over the exporter's life.", "device")
	devInfoDesc     = desc("device_info", "An RDMA device, with what identifies it.", "device", "driver", "node_type", "protocol", "node_guid", "sys_image_guid", "firmware_version", "bus", "bus_address")
	portInfoDesc    = desc("port_info", "A port of an RDMA device, with its link layer and network device.", "device", "port", "link_layer", "netdev")
	portStateDesc   = desc("port_state", "The port's logical state (1: DOWN, 2: INIT, 3: ARMED, 4: ACTIVE, 5: ACTIVE_DEFER).", "device", "port")
	portPhysDesc    = desc("port_physical_state", "The port's physical state (1: SLEEP, 2: POLLING, 3: DISABLED, 4: PORT_CONFIGURATION_TRAINING, 5: LINK_UP, 6: LINK_ERROR_RECOVERY, 7: PHY_TEST).", "device", "port")
	portChangesDesc = desc("port_state_changes_total", "Changes of the port's logical state the exporter saw (at each scrape and each RDMA monitor event).", "device", "port")
	portRateDesc    = desc("port_rate_bytes_per_second", "The port's signalling rate (sysfs ports/N/rate).", "device", "port")
	portMTUDesc     = desc("port_active_mtu_bytes", "The port's active MTU (QUERY_PORT).", "device", "port")
	portMaxMTUDesc  = desc("port_max_mtu_bytes", "The largest MTU the port supports (QUERY_PORT).", "device", "port")
	portLIDDesc     = desc("port_lid", "The port's LID (InfiniBand ports only).", "device", "port")
	resourcesDesc   = desc("resources", "Objects the device tracks now, by type (RDMA netlink's resource summary: pd, cq, qp, cm_id, mr, ctx, srq).", "device", "type")
)

// counterKind is where a family of kernel-named counters comes from.
type counterKind struct {
	prefix string   // the family name's start
	help   string   // with %s for the kernel's name
	labels []string // the series' labels
}

var (
	portHW = counterKind{namespace + "_port_hw", "Hardware counter %s of the port, as RDMA netlink reports it (rdma statistic show).", []string{"device", "port"}}
	devHW  = counterKind{namespace + "_device_hw", "Hardware counter %s of the whole device (sysfs hw_counters).", []string{"device"}}
	qpHW   = counterKind{namespace + "_qp_counter_hw", "Hardware counter %s of a QP counter (rdma statistic qp show).", []string{"device", "port", "counter_id", "qp_type"}}
	pma    = counterKind{namespace + "_port_pma", "IB PMA port counter %s (sysfs ports/N/counters).", []string{"device", "port"}}
	pmaExt = counterKind{namespace + "_port_pma_ext", "IB PMA extended port counter %s (sysfs ports/N/counters_ext).", []string{"device", "port"}}
)

// counterDescs makes and keeps the descriptors of kernel-named counters:
// their help text depends on the name only, as Prometheus requires of one
// family.
type counterDescs struct {
	mu sync.Mutex
	m  map[counterID]counterDesc
}

type counterID struct{ prefix, counter string }

type counterDesc struct {
	desc *prometheus.Desc
	vt   prometheus.ValueType
}

func (d *counterDescs) get(k counterKind, counter string) (*prometheus.Desc, prometheus.ValueType) {
	id := counterID{k.prefix, counter}
	d.mu.Lock()
	defer d.mu.Unlock()
	if cd, ok := d.m[id]; ok {
		return cd.desc, cd.vt
	}
	if d.m == nil {
		d.m = map[counterID]counterDesc{}
	}
	name, gauge := counterFamily(k.prefix, counter)
	cd := counterDesc{prometheus.NewDesc(name, fmt.Sprintf(k.help, counter), k.labels, nil), prometheus.CounterValue}
	if gauge {
		cd.vt = prometheus.GaugeValue
	}
	d.m[id] = cd
	return cd.desc, cd.vt
}

// batch collects one device's metrics, so that a device that vanishes
// mid-scrape can be dropped whole. Two kernel names that fold to one
// metric name ("Rx" and "rx") keep the first.
type batch struct {
	metrics []prometheus.Metric
	seen    map[seriesKey]bool
}

// seriesKey names one series of a batch.
type seriesKey struct {
	desc   *prometheus.Desc
	labels string
}

func (b *batch) add(d *prometheus.Desc, vt prometheus.ValueType, v float64, labels ...string) {
	b.metrics = append(b.metrics, prometheus.MustNewConstMetric(d, vt, v, labels...))
}

// addCounter adds a kernel-named counter.
func (b *batch) addCounter(descs *counterDescs, k counterKind, counter string, v uint64, labels ...string) {
	d, vt := descs.get(k, counter)
	key := seriesKey{d, strings.Join(labels, "\xff")}
	if b.seen == nil {
		b.seen = map[seriesKey]bool{}
	}
	if b.seen[key] {
		return
	}
	b.seen[key] = true
	b.add(d, vt, float64(v), labels...)
}
