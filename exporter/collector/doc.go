// Package collector is a Prometheus collector (prometheus.Collector) of
// every RDMA device the kernel has in the caller's network namespace: the
// devices and ports as RDMA netlink and sysfs describe them, every
// hardware counter RDMA netlink reports, the IB PMA port counters of
// sysfs where the driver has them, resource counts, QP counters and the
// RDMA monitor's events. It needs no rdma-core and no cgo.
//
//	c, err := collector.New(collector.Options{})
//	if err != nil { ... }
//	defer c.Close()
//	reg := prometheus.NewRegistry()
//	reg.MustRegister(c)
//	http.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
//
// Each scrape lists the devices (package device's snapshot, kept current by
// the kernel's events), reads every port's hardware counters in one batch
// of netlink requests and the resource summary in one dump, then the rest
// device by device. A device added, renamed, moved to another network
// namespace or deleted shows in the next scrape; one that vanishes during
// a scrape is left out of it whole. A value the kernel does not have (a
// PMA counter that reads "N/A (no PMA)", a driver without hardware
// counters) is an absent series, never a failed scrape. On a kernel
// without RDMA the collector works and rdma_up is 0.
//
// The metric names and labels are listed in the exporter's README.
package collector
