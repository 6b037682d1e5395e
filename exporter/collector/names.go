package collector

import "strings"

// metricName turns a kernel counter name into the part of a metric name
// it becomes: lower case, with every character Prometheus does not allow
// replaced by '_' ("VL15_dropped" → "vl15_dropped", "rx-pkts" → "rx_pkts").
func metricName(counter string) string {
	var b strings.Builder
	for i, r := range strings.ToLower(counter) {
		switch {
		case r >= 'a' && r <= 'z', r == '_', r >= '0' && r <= '9' && i > 0:
			b.WriteRune(r)
		case r >= '0' && r <= '9':
			b.WriteByte('_')
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	return b.String()
}

// gaugeCounters are hardware "counters" that do not count: they are
// exported as gauges, without _total. lifespan (mlx5, efa) is how many
// milliseconds the driver caches the other values; bnxt_re's active_* and
// watermark_* are current and peak object counts.
func isGauge(counter string) bool {
	return counter == "lifespan" || strings.HasPrefix(counter, "active_") || strings.HasPrefix(counter, "watermark_")
}

// counterFamily is the metric name of a kernel counter under prefix:
// prefix_name_total for a counter, prefix_name for a gauge.
func counterFamily(prefix, counter string) (name string, gauge bool) {
	n := prefix + "_" + metricName(counter)
	if isGauge(counter) {
		return n, true
	}
	return n + "_total", false
}
