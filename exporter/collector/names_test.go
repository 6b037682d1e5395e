package collector

import (
	"math"
	"testing"

	"github.com/prometheus/common/model"
)

func TestMetricName(t *testing.T) {
	for in, want := range map[string]string{
		"rcvd_pkts":     "rcvd_pkts",
		"VL15_dropped":  "vl15_dropped",
		"rx-pkts":       "rx_pkts",
		"np.cnp sent":   "np_cnp_sent",
		"4x_errors":     "_4x_errors",
		"ächtung":       "_chtung",
		"":              "",
		"lifespan":      "lifespan",
		"cc_rx_ce_pkts": "cc_rx_ce_pkts",
	} {
		if got := metricName(in); got != want {
			t.Errorf("metricName(%q) = %q, want %q", in, got, want)
		}
	}
	for in, want := range map[string]string{
		"rx_pkts":           "rdma_port_hw_rx_pkts_total",
		"lifespan":          "rdma_port_hw_lifespan",
		"active_qps":        "rdma_port_hw_active_qps",
		"watermark_mrs":     "rdma_port_hw_watermark_mrs",
		"duplicate_request": "rdma_port_hw_duplicate_request_total",
	} {
		if got, _ := counterFamily(portHW.prefix, in); got != want {
			t.Errorf("counterFamily(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestParseRate(t *testing.T) {
	for in, want := range map[string]float64{
		"100 Gb/sec (4X EDR)": 12.5e9,
		"2.5 Gb/sec (1X SDR)": 312.5e6,
		"10 Gb/sec (1X QDR)":  1.25e9,
	} {
		if got, ok := parseRate(in); !ok || got != want {
			t.Errorf("parseRate(%q) = %v, %v; want %v", in, got, ok, want)
		}
	}
	for _, bad := range []string{"", "N/A", "-1 Gb/sec", "Inf Gb/sec", "NaN"} {
		if _, ok := parseRate(bad); ok {
			t.Errorf("parseRate(%q) accepted", bad)
		}
	}
}

// FuzzCounterName: whatever name a driver gives a counter, the family name
// made of it is a valid Prometheus metric name.
func FuzzCounterName(f *testing.F) {
	for _, s := range []string{"rx_pkts", "VL15_dropped", "9", "", "a-b.c", "\xff"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		name, _ := counterFamily(portHW.prefix, s)
		if !model.LegacyValidation.IsValidMetricName(name) {
			t.Fatalf("counter %q gives the invalid name %q", s, name)
		}
	})
}

// FuzzParseSysfs: the rate parser never panics and never yields a
// negative or non-finite value.
func FuzzParseSysfs(f *testing.F) {
	for _, s := range []string{"100 Gb/sec (4X EDR)", "4: ACTIVE", "N/A (no PMA)", "", "1e400 Gb/sec"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if v, ok := parseRate(s); ok && !(v >= 0 && !math.IsInf(v, 0)) {
			t.Fatalf("parseRate(%q) = %v", s, v)
		}
	})
}
