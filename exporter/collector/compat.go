package collector

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/rdmastack/rdmastack/device"
)

// node_exporter's infiniband collector (1.5.0): its families, read from
// sysfs as it reads them, so that the values are its values.
var (
	neInfo     = prometheus.NewDesc("node_infiniband_info", "Non-numeric data from /sys/class/infiniband/<device>, value is always 1.", neInfoLabels, nil)
	neState    = nePort("state_id", "State of the InfiniBand port (0: no change, 1: down, 2: init, 3: armed, 4: active, 5: act defer)")
	nePhys     = nePort("physical_state_id", "Physical state of the InfiniBand port (0: no change, 1: sleep, 2: polling, 3: disable, 4: shift, 5: link up, 6: link error recover, 7: phytest)")
	neRate     = nePort("rate_bytes_per_second", "Maximum signal transfer rate")
	neCounters = map[string]neCounter{}
)

var neInfoLabels = []string{"device", "board_id", "firmware_version", "hca_type"}

func nePort(name, help string) *prometheus.Desc {
	return prometheus.NewDesc("node_infiniband_"+name, help, portLabelNames, nil)
}

// neCounter is the family node_exporter makes of one sysfs counter file,
// and the factor it applies (the data counters count 4-octet words).
type neCounter struct {
	desc  *prometheus.Desc
	scale uint64
}

func init() {
	for _, m := range []struct{ dir, file, name, help string }{
		{"counters", "excessive_buffer_overrun_errors", "excessive_buffer_overrun_errors_total", "Number of times that OverrunErrors consecutive flow control update periods occurred, each having at least one overrun error."},
		{"counters", "link_downed", "link_downed_total", "Number of times the link failed to recover from an error state and went down"},
		{"counters", "link_error_recovery", "link_error_recovery_total", "Number of times the link successfully recovered from an error state"},
		{"counters", "local_link_integrity_errors", "local_link_integrity_errors_total", "Number of times that the count of local physical errors exceeded the threshold specified by LocalPhyErrors."},
		{"counters", "multicast_rcv_packets", "multicast_packets_received_total", "Number of multicast packets received (including errors)"},
		{"counters", "multicast_xmit_packets", "multicast_packets_transmitted_total", "Number of multicast packets transmitted (including errors)"},
		{"counters", "port_rcv_constraint_errors", "port_constraint_errors_received_total", "Number of packets received on the switch physical port that are discarded"},
		{"counters", "port_xmit_constraint_errors", "port_constraint_errors_transmitted_total", "Number of packets not transmitted from the switch physical port"},
		{"counters", "port_rcv_data", "port_data_received_bytes_total", "Number of data octets received on all links"},
		{"counters", "port_xmit_data", "port_data_transmitted_bytes_total", "Number of data octets transmitted on all links"},
		{"counters", "port_rcv_discards", "port_discards_received_total", "Number of inbound packets discarded by the port because the port is down or congested"},
		{"counters", "port_xmit_discards", "port_discards_transmitted_total", "Number of outbound packets discarded by the port because the port is down or congested"},
		{"counters", "port_rcv_errors", "port_errors_received_total", "Number of packets containing an error that were received on this port"},
		{"counters", "port_rcv_packets", "port_packets_received_total", "Number of packets received on all VLs by this port (including errors)"},
		{"counters", "port_xmit_packets", "port_packets_transmitted_total", "Number of packets transmitted on all VLs from this port (including errors)"},
		{"counters", "port_rcv_remote_physical_errors", "port_receive_remote_physical_errors_total", "Number of packets marked with the EBP (End of Bad Packet) delimiter received on the port."},
		{"counters", "port_rcv_switch_relay_errors", "port_receive_switch_relay_errors_total", "Number of packets that could not be forwarded by the switch."},
		{"counters", "port_xmit_wait", "port_transmit_wait_total", "Number of ticks during which the port had data to transmit but no data was sent during the entire tick"},
		{"counters", "symbol_error", "symbol_error_total", "Number of minor link errors detected on one or more physical lanes."},
		{"counters", "unicast_rcv_packets", "unicast_packets_received_total", "Number of unicast packets received (including errors)"},
		{"counters", "unicast_xmit_packets", "unicast_packets_transmitted_total", "Number of unicast packets transmitted (including errors)"},
		{"counters", "VL15_dropped", "vl15_dropped_total", "Number of incoming VL15 packets dropped due to resource limitations."},
		{"counters_ext", "port_multicast_rcv_packets", "legacy_multicast_packets_received_total", "Number of multicast packets received"},
		{"counters_ext", "port_multicast_xmit_packets", "legacy_multicast_packets_transmitted_total", "Number of multicast packets transmitted"},
		{"counters_ext", "port_rcv_data_64", "legacy_data_received_bytes_total", "Number of data octets received on all links"},
		{"counters_ext", "port_rcv_packets_64", "legacy_packets_received_total", "Number of data packets received on all links"},
		{"counters_ext", "port_unicast_rcv_packets", "legacy_unicast_packets_received_total", "Number of unicast packets received"},
		{"counters_ext", "port_unicast_xmit_packets", "legacy_unicast_packets_transmitted_total", "Number of unicast packets transmitted"},
		{"counters_ext", "port_xmit_data_64", "legacy_data_transmitted_bytes_total", "Number of data octets transmitted on all links"},
		{"counters_ext", "port_xmit_packets_64", "legacy_packets_transmitted_total", "Number of data packets received on all links"},
	} {
		scale := uint64(1)
		switch m.file {
		case "port_rcv_data", "port_xmit_data", "port_rcv_data_64", "port_xmit_data_64":
			scale = 4
		}
		neCounters[m.dir+"/"+m.file] = neCounter{nePort(m.name, m.help), scale}
	}
}

// nodeExporterPort adds node_exporter's families for one port: state and
// physical state (the numbers sysfs prints before the name, which are the
// kernel's, as RDMA netlink reports them), the rate and the PMA counters
// read for the port's own families.
func nodeExporterPort(b *batch, pl *labels, p device.Port, rate float64, hasRate bool, pma, ext []sysCounter) {
	b.add(neState, prometheus.GaugeValue, float64(p.State), pl)
	b.add(nePhys, prometheus.GaugeValue, float64(p.PhysState), pl)
	if hasRate {
		b.add(neRate, prometheus.GaugeValue, rate, pl)
	}
	for dir, cs := range map[string][]sysCounter{"counters": pma, "counters_ext": ext} {
		for _, ct := range cs {
			if nc, ok := neCounters[dir+"/"+ct.name]; ok {
				b.add(nc.desc, prometheus.CounterValue, float64(ct.value*nc.scale), pl)
			}
		}
	}
}
