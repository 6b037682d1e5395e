package collector

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/rdmastack/rdmastack/device"
	"github.com/rdmastack/rdmastack/ib"
	"github.com/rdmastack/rdmastack/nldev"
)

// Options says what the collector reads besides what it always reads.
type Options struct {
	// SysfsRoot is where sysfs is mounted; "" means /sys.
	SysfsRoot string

	// OptionalCounters names optional hardware counters (mlx5's
	// cc_rx_ce_pkts, ...) to enable on every port that has them, as
	// "rdma statistic set link DEV/PORT optional-counters NAME,..." does
	// (needs CAP_NET_ADMIN). Those already enabled stay enabled.
	OptionalCounters []string

	// QPCounters puts every port in the kernel's auto mode (a QP counter
	// per QP type, "rdma statistic qp set link DEV/PORT auto type on")
	// and exports the QP counters. It changes kernel state (needs
	// CAP_NET_ADMIN); Close puts back what it changed.
	QPCounters bool

	// NoVerbs leaves out what only the verbs interface reports (the
	// ports' MTUs): reading it opens each device's verbs context briefly
	// in every scrape.
	NoVerbs bool

	// NodeExporter also exports node_exporter's node_infiniband_* families
	// for what its infiniband collector reports, with its names, labels
	// and values, so that its dashboards keep working.
	NodeExporter bool

	// Logger receives what the collector changes and what it cannot read;
	// nil discards it.
	Logger *slog.Logger
}

// Collector is a prometheus.Collector of every RDMA device of the network
// namespace it was made in. Scrapes are serialised. Close releases its
// sockets and undoes what QPCounters changed.
type Collector struct {
	opts  Options
	log   *slog.Logger
	descs counterDescs

	mu   sync.Mutex // one scrape, or one event, at a time; guards what follows
	k    kernel
	st   state
	done chan struct{}

	stop   context.CancelFunc
	closed sync.Once
	wg     sync.WaitGroup
}

// state is what the collector remembers between scrapes.
type state struct {
	noRDMA       bool // the last scrape found no RDMA; logged once
	monitorUp    bool
	events       map[nldev.EventType]uint64
	scrapeErrors uint64
	dev          map[uint32]*devState // by device index
	layouts      map[uint32]*layout   // by device index
	verbs        map[uint32]*verbsAttrs
	optionalSet  map[portKey]bool // ports whose optional counters were set
	autoSet      map[portKey]bool // ports put in auto mode by us
	logged       map[string]bool  // one-time log lines
}

// devState is what is remembered of one device.
type devState struct {
	errors  uint64
	state   map[uint32]ib.PortState // by port
	changes map[uint32]uint64
}

type portKey struct{ dev, port uint32 }

// New returns a collector of the running kernel's RDMA devices. It does not
// fail on a kernel without RDMA: rdma_up then says 0.
func New(opts Options) (*Collector, error) {
	return newCollector(opts, &live{})
}

func newCollector(opts Options, k kernel) (*Collector, error) {
	if opts.SysfsRoot == "" {
		opts.SysfsRoot = "/sys"
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	c := &Collector{opts: opts, log: log, k: k, st: state{
		events: map[nldev.EventType]uint64{}, dev: map[uint32]*devState{},
		layouts: map[uint32]*layout{}, verbs: map[uint32]*verbsAttrs{},
		optionalSet: map[portKey]bool{}, autoSet: map[portKey]bool{}, logged: map[string]bool{},
	}}
	ctx, stop := context.WithCancel(context.Background())
	c.stop = stop
	c.wg.Add(1)
	go c.watch(ctx)
	return c, nil
}

// Describe sends nothing: the hardware counters' families are known only
// once the kernel names them, which makes this an unchecked collector.
func (c *Collector) Describe(chan<- *prometheus.Desc) {}

// Collect reads every device and sends its metrics.
func (c *Collector) Collect(ch chan<- prometheus.Metric) {
	c.mu.Lock()
	defer c.mu.Unlock()
	start := time.Now()
	var out []prometheus.Metric
	up := c.scrape(&out)
	for _, m := range out {
		ch <- m
	}
	ch <- prometheus.MustNewConstMetric(upDesc, prometheus.GaugeValue, boolValue(up))
	ch <- prometheus.MustNewConstMetric(monitorUpDesc, prometheus.GaugeValue, boolValue(c.st.monitorUp))
	for t, n := range c.st.events {
		ch <- prometheus.MustNewConstMetric(monitorEvDesc, prometheus.CounterValue, float64(n), t.String())
	}
	ch <- prometheus.MustNewConstMetric(scrapeErrDesc, prometheus.CounterValue, float64(c.st.scrapeErrors))
	ch <- prometheus.MustNewConstMetric(scrapeDurDesc, prometheus.GaugeValue, time.Since(start).Seconds())
}

// Close stops the event watch, undoes the auto mode QPCounters set and
// closes the sockets. It is safe to call more than once.
func (c *Collector) Close() error {
	var err error
	c.closed.Do(func() {
		c.stop()
		c.wg.Wait()
		c.mu.Lock()
		defer c.mu.Unlock()
		for p := range c.st.autoSet {
			if e := c.k.setQPCounterAuto(p.dev, p.port, 0); e != nil && !isGone(e) {
				err = errors.Join(err, e)
			} else {
				c.log.Info("QP counter auto mode turned off again", "device", p.dev, "port", p.port)
			}
		}
		err = errors.Join(err, c.k.close())
	})
	return err
}

func boolValue(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// once logs a line the first time key is seen.
func (c *Collector) once(key string, level slog.Level, msg string, args ...any) {
	if c.st.logged[key] {
		return
	}
	c.st.logged[key] = true
	c.log.Log(context.Background(), level, msg, args...)
}

// snapshot lists the devices; no RDMA at all is reported as ok=false with
// no error.
func (c *Collector) snapshot() (*device.Snapshot, bool, error) {
	snap, err := c.k.devices()
	if errors.Is(err, nldev.ErrNoRDMA) {
		c.once("nordma", slog.LevelWarn, "the kernel has no RDMA: rdma_up is 0 until it has", "err", err)
		c.st.noRDMA = true
		return nil, false, nil
	}
	if err != nil {
		return nil, true, err
	}
	if c.st.noRDMA {
		c.log.Info("the kernel has RDMA now")
		c.st.noRDMA = false
		delete(c.st.logged, "nordma")
	}
	return snap, true, nil
}
