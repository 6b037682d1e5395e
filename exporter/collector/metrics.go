package collector

import (
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"google.golang.org/protobuf/proto"
)

const namespace = "rdma"

// desc builds a fixed family of the collector.
func desc(name, help string, labels ...string) *prometheus.Desc {
	return prometheus.NewDesc(namespace+"_"+name, help, labels, nil)
}

// The label names of the info families and the others that are not a
// device's or a port's.
var (
	devInfoLabels  = []string{"device", "driver", "node_type", "protocol", "node_guid", "sys_image_guid", "firmware_version", "bus", "bus_address"}
	portInfoLabels = []string{"device", "port", "link_layer", "netdev"}
	resourceLabels = []string{"device", "type"}
	qpLabels       = []string{"device", "port", "counter_id", "qp_type"}
)

// The fixed families; the hardware counters' families are made as the
// kernel names them (see counterDescs).
var (
	upDesc          = desc("up", "1 when the kernel has RDMA (RDMA netlink answers), 0 when it has none.")
	monitorUpDesc   = desc("monitor_up", "1 while the exporter receives RDMA monitor events (Linux 6.12 and later), 0 otherwise.")
	monitorEvDesc   = desc("monitor_events_total", "RDMA monitor events received, by type.", "type")
	scrapeDurDesc   = desc("scrape_duration_seconds", "How long the whole scrape of the RDMA collector took.")
	scrapeErrDesc   = desc("scrape_errors_total", "Scrapes in which reading something other than one device failed (the device list, the resource summary).")
	devDurDesc      = desc("device_scrape_duration_seconds", "How long reading one device took in this scrape (its share of the batched netlink requests excluded).", devLabelNames...)
	devErrDesc      = desc("device_scrape_errors_total", "Reads of the device that failed, over the exporter's life.", devLabelNames...)
	devInfoDesc     = desc("device_info", "An RDMA device, with what identifies it.", devInfoLabels...)
	portInfoDesc    = desc("port_info", "A port of an RDMA device, with its link layer and network device.", portInfoLabels...)
	portStateDesc   = desc("port_state", "The port's logical state (1: DOWN, 2: INIT, 3: ARMED, 4: ACTIVE, 5: ACTIVE_DEFER).", portLabelNames...)
	portPhysDesc    = desc("port_physical_state", "The port's physical state (1: SLEEP, 2: POLLING, 3: DISABLED, 4: PORT_CONFIGURATION_TRAINING, 5: LINK_UP, 6: LINK_ERROR_RECOVERY, 7: PHY_TEST).", portLabelNames...)
	portChangesDesc = desc("port_state_changes_total", "Changes of the port's logical state the exporter saw (at each scrape and each RDMA monitor event).", portLabelNames...)
	portRateDesc    = desc("port_rate_bytes_per_second", "The port's signalling rate (sysfs ports/N/rate).", portLabelNames...)
	portMTUDesc     = desc("port_active_mtu_bytes", "The port's active MTU (QUERY_PORT).", portLabelNames...)
	portMaxMTUDesc  = desc("port_max_mtu_bytes", "The largest MTU the port supports (QUERY_PORT).", portLabelNames...)
	portLIDDesc     = desc("port_lid", "The port's LID (InfiniBand ports only).", portLabelNames...)
	resourcesDesc   = desc("resources", "Objects the device tracks now, by type (RDMA netlink's resource summary: pd, cq, qp, cm_id, mr, ctx, srq).", resourceLabels...)
)

// counterKind is where a family of kernel-named counters comes from.
type counterKind struct {
	prefix string   // the family name's start
	help   string   // with %s for the kernel's name
	labels []string // the series' labels
}

var (
	portHW = counterKind{namespace + "_port_hw", "Hardware counter %s of the port, as RDMA netlink reports it (rdma statistic show).", portLabelNames}
	devHW  = counterKind{namespace + "_device_hw", "Hardware counter %s of the whole device (sysfs hw_counters).", devLabelNames}
	qpHW   = counterKind{namespace + "_qp_counter_hw", "Hardware counter %s of a QP counter (rdma statistic qp show).", qpLabels}
	pma    = counterKind{namespace + "_port_pma", "IB PMA port counter %s (sysfs ports/N/counters).", portLabelNames}
	pmaExt = counterKind{namespace + "_port_pma_ext", "IB PMA extended port counter %s (sysfs ports/N/counters_ext).", portLabelNames}
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
	labels *labels
}

// labels is one set of label values, made once and shared by every series
// that carries it (a port's dozens of counters), in the sorted order the
// registry wants.
type labels struct {
	pairs []*dto.LabelPair
}

// newLabels pairs names with values, sorted by name.
func newLabels(names []string, values ...string) *labels {
	l := &labels{pairs: make([]*dto.LabelPair, len(names))}
	for i, n := range names {
		l.pairs[i] = &dto.LabelPair{Name: proto.String(n), Value: proto.String(values[i])}
	}
	slices.SortFunc(l.pairs, func(a, b *dto.LabelPair) int { return strings.Compare(a.GetName(), b.GetName()) })
	return l
}

// The label sets most series carry.
var (
	devLabelNames  = []string{"device"}
	portLabelNames = []string{"device", "port"}
)

// metric is a constant sample with a shared label set: what
// prometheus.MustNewConstMetric makes, without building and checking the
// label pairs again for each series (the registry checks them).
type metric struct {
	desc   *prometheus.Desc
	vt     prometheus.ValueType
	value  float64
	labels *labels
}

func (m *metric) Desc() *prometheus.Desc { return m.desc }

func (m *metric) Write(out *dto.Metric) error {
	out.Label = m.labels.pairs
	v := m.value
	if m.vt == prometheus.CounterValue {
		out.Counter = &dto.Counter{Value: &v}
	} else {
		out.Gauge = &dto.Gauge{Value: &v}
	}
	return nil
}

func (b *batch) add(d *prometheus.Desc, vt prometheus.ValueType, v float64, l *labels) {
	b.metrics = append(b.metrics, &metric{d, vt, v, l})
}

// addCounter adds a kernel-named counter.
func (b *batch) addCounter(descs *counterDescs, k counterKind, counter string, v uint64, l *labels) {
	d, vt := descs.get(k, counter)
	key := seriesKey{d, l}
	if b.seen == nil {
		b.seen = map[seriesKey]bool{}
	}
	if b.seen[key] {
		return
	}
	b.seen[key] = true
	b.add(d, vt, float64(v), l)
}
