package collector

import (
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/sys/unix"

	"github.com/rdmastack/rdmastack/device"
	"github.com/rdmastack/rdmastack/ib"
	"github.com/rdmastack/rdmastack/nldev"
	"github.com/rdmastack/rdmastack/uverbs"
)

// isGone reports whether err says the device or port is no longer there.
func isGone(err error) bool {
	return errors.Is(err, os.ErrNotExist) || errors.Is(err, uverbs.ErrDeviceRemoved) || errors.Is(err, unix.ENODEV)
}

// scrape reads everything into out and reports whether the kernel has RDMA.
func (c *Collector) scrape(out *[]prometheus.Metric) bool {
	snap, up, err := c.snapshot()
	if !up {
		return false
	}
	if err != nil {
		c.st.scrapeErrors++
		c.log.Error("cannot list the RDMA devices", "err", err)
		return true
	}
	var ids []nldev.PortID
	for _, d := range snap.Devices {
		for _, p := range d.Ports {
			ids = append(ids, nldev.PortID{Dev: d.Index, Port: p.Number})
		}
	}
	if len(c.opts.OptionalCounters) > 0 {
		c.enableOptional(ids)
	}
	if c.opts.QPCounters {
		c.enableAuto(ids)
	}
	var ctrs [][]nldev.Counter
	var ctrErrs []error
	if len(ids) > 0 {
		ctrs, ctrErrs = c.k.portCounters(ids)
	}
	res := map[uint32]nldev.ResourceSummary{}
	if len(snap.Devices) > 0 {
		sums, err := c.k.resources()
		if err != nil {
			c.st.scrapeErrors++
			c.log.Error("cannot read the resource summary", "err", err)
		}
		for _, s := range sums {
			res[s.DevIndex] = s
		}
	}
	present := map[uint32]bool{}
	i := 0
	for _, d := range snap.Devices {
		n := len(d.Ports)
		b, ok := c.device(d, ctrs[i:i+n], ctrErrs[i:i+n], res)
		i += n
		if !ok {
			continue // gone mid-scrape: none of its series
		}
		present[d.Index] = true
		*out = append(*out, b.metrics...)
	}
	for idx := range c.st.dev {
		if !present[idx] {
			delete(c.st.dev, idx)
			delete(c.st.layouts, idx)
			delete(c.st.verbs, idx)
		}
	}
	return true
}

// device reads one device; ok is false when it vanished meanwhile.
func (c *Collector) device(d device.Device, ctrs [][]nldev.Counter, ctrErrs []error, res map[uint32]nldev.ResourceSummary) (b batch, ok bool) {
	start := time.Now()
	ds := c.st.dev[d.Index]
	if ds == nil {
		ds = &devState{state: map[uint32]ib.PortState{}, changes: map[uint32]uint64{}}
	}
	gone := false
	fail := func(what string, err error) {
		if isGone(err) {
			gone = true
			return
		}
		ds.errors++
		c.log.Warn("cannot read "+what, "device", d.Name, "err", err)
	}
	dev := d.Name
	sys := filepath.Join(c.opts.SysfsRoot, "class", "infiniband", d.Name)

	dl := newLabels(devLabelNames, dev)
	b.add(devInfoDesc, prometheus.GaugeValue, 1, newLabels(devInfoLabels, dev, d.DriverID.String(), d.NodeType.String(), string(d.Protocol),
		d.NodeGUID.String(), d.SysImageGUID.String(), d.FirmwareVersion, d.Parent.Bus, d.Parent.Name))

	attrs := c.portAttrs(d, fail)
	l := c.st.layouts[d.Index]
	if l == nil || l.name != d.Name {
		nums := make([]uint32, len(d.Ports))
		for i, p := range d.Ports {
			nums[i] = p.Number
		}
		l = readLayout(sys, d.Name, nums)
	}
	for i, p := range d.Ports {
		port := strconv.FormatUint(uint64(p.Number), 10)
		psys := filepath.Join(sys, "ports", port)
		pl := newLabels(portLabelNames, dev, port)
		b.add(portInfoDesc, prometheus.GaugeValue, 1, newLabels(portInfoLabels, dev, port, p.LinkLayer.String(), p.Netdev))
		b.add(portStateDesc, prometheus.GaugeValue, float64(p.State), pl)
		b.add(portPhysDesc, prometheus.GaugeValue, float64(p.PhysState), pl)
		c.countChange(ds, p.Number, p.State)
		b.add(portChangesDesc, prometheus.CounterValue, float64(ds.changes[p.Number]), pl)
		if p.LinkLayer == ib.LinkLayerInfiniBand {
			b.add(portLIDDesc, prometheus.GaugeValue, float64(p.LID), pl)
		}
		rate, hasRate := readRate(filepath.Join(psys, "rate"))
		if hasRate {
			b.add(portRateDesc, prometheus.GaugeValue, rate, pl)
		}
		if attrs != nil && i < len(attrs) && attrs[i] != nil {
			b.add(portMTUDesc, prometheus.GaugeValue, float64(attrs[i].ActiveMTU.Bytes()), pl)
			b.add(portMaxMTUDesc, prometheus.GaugeValue, float64(attrs[i].MaxMTU.Bytes()), pl)
		}
		switch err := ctrErrs[i]; {
		case err == nil:
			for _, ct := range ctrs[i] {
				b.addCounter(&c.descs, portHW, ct.Name, ct.Value, pl)
			}
		case errors.Is(err, nldev.ErrNoCounters):
		default:
			fail("the port's hardware counters", err)
		}
		pc := readCounters(filepath.Join(psys, "counters"), l.pma[p.Number])
		ext := readCounters(filepath.Join(psys, "counters_ext"), l.pmaExt[p.Number])
		for _, ct := range pc {
			b.addPMA(&c.descs, pma, ct, pl)
		}
		for _, ct := range ext {
			b.addPMA(&c.descs, pmaExt, ct, pl)
		}
		if c.opts.NodeExporter {
			nodeExporterPort(&b, pl, p, rate, hasRate, pc, ext)
		}
	}
	for _, ct := range readCounters(filepath.Join(sys, "hw_counters"), l.hw) {
		b.addCounter(&c.descs, devHW, ct.name, ct.value, dl)
	}
	if s, ok := res[d.Index]; ok {
		for _, rc := range s.Counts {
			b.add(resourcesDesc, prometheus.GaugeValue, float64(rc.Count), newLabels(resourceLabels, dev, string(rc.Type)))
		}
	}
	if c.opts.QPCounters {
		qcs, err := c.k.qpCounters(d.Index)
		if err != nil {
			fail("the QP counters", err)
		}
		for _, q := range qcs {
			typ := ""
			if q.QPType != nil {
				typ = q.QPType.String()
			}
			port, id := strconv.FormatUint(uint64(q.Port), 10), strconv.FormatUint(uint64(q.ID), 10)
			ql := newLabels(qpLabels, dev, port, id, typ)
			for _, ct := range q.Counters {
				b.addCounter(&c.descs, qpHW, ct.Name, ct.Value, ql)
			}
		}
	}
	if c.opts.NodeExporter {
		b.add(neInfo, prometheus.GaugeValue, 1, newLabels(neInfoLabels, dev, l.board, l.fw, l.hca))
	}
	if d.SysfsPath != "" {
		if _, err := os.Stat(d.SysfsPath); errors.Is(err, os.ErrNotExist) {
			gone = true // its sysfs directory went away while it was read
		}
	}
	if gone {
		c.log.Info("device went away during the scrape: its series are left out", "device", dev)
		return batch{}, false
	}
	c.st.dev[d.Index] = ds
	c.st.layouts[d.Index] = l
	b.add(devErrDesc, prometheus.CounterValue, float64(ds.errors), dl)
	b.add(devDurDesc, prometheus.GaugeValue, time.Since(start).Seconds(), dl)
	return b, true
}

// verbsRefresh is how long the ports' verbs attributes (the MTUs) are
// kept: reading them opens the device's verbs context, which costs more
// than the rest of the device's scrape. A port whose state changed is read
// again at once.
const verbsRefresh = 30 * time.Second

// verbsAttrs is one reading of a device's port attributes.
type verbsAttrs struct {
	at     time.Time
	states []ib.PortState
	attrs  []*uverbs.PortAttr
}

// portAttrs returns d's ports' verbs attributes, nil when they cannot be
// read (no verbs device, no access, Options.NoVerbs).
func (c *Collector) portAttrs(d device.Device, fail func(string, error)) []*uverbs.PortAttr {
	if c.opts.NoVerbs || d.Uverbs == "" {
		return nil
	}
	states := make([]ib.PortState, len(d.Ports))
	for i, p := range d.Ports {
		states[i] = p.State
	}
	if v := c.st.verbs[d.Index]; v != nil && time.Since(v.at) < verbsRefresh && slices.Equal(v.states, states) {
		return v.attrs
	}
	a, err := c.k.queryPorts(d)
	switch {
	case errors.Is(err, os.ErrPermission):
		c.once("verbs-perm/"+d.Name, slog.LevelInfo, "no access to the device's verbs interface: its MTUs are not exported", "device", d.Name, "err", err)
		return nil
	case err != nil:
		fail("the ports' verbs attributes", err)
		return nil
	}
	c.st.verbs[d.Index] = &verbsAttrs{at: time.Now(), states: states, attrs: a}
	return a
}

// countChange counts a change of a port's logical state since it was last
// seen.
func (c *Collector) countChange(ds *devState, port uint32, s ib.PortState) {
	if last, ok := ds.state[port]; ok && last != s {
		ds.changes[port]++
	}
	ds.state[port] = s
}

// addPMA adds one PMA counter. PortRcvData and PortXmitData (and their
// 64-bit forms) count 4-octet words: they become bytes, named _bytes.
func (b *batch) addPMA(descs *counterDescs, k counterKind, ct sysCounter, l *labels) {
	switch ct.name {
	case "port_rcv_data", "port_xmit_data", "port_rcv_data_64", "port_xmit_data_64":
		b.addCounter(descs, k, ct.name+"_bytes", ct.value*4, l)
	default:
		b.addCounter(descs, k, ct.name, ct.value, l)
	}
}
