package collector

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync"

	"github.com/rdmastack/rdmastack/device"
	"github.com/rdmastack/rdmastack/ib"
	"github.com/rdmastack/rdmastack/nldev"
	"github.com/rdmastack/rdmastack/uverbs"
)

// fakeKernel plays the kernel for the unit tests: the two devices of
// testdata/sysfs (mlx5_0 with an InfiniBand port, mlx5_1 with a RoCE port
// that is down), with counters, resources and QP counters.
type fakeKernel struct {
	mu       sync.Mutex
	snap     *device.Snapshot
	listErr  error
	counters map[nldev.PortID][]nldev.Counter
	ctrErr   map[nldev.PortID]error
	summary  []nldev.ResourceSummary
	status   map[nldev.PortID][]nldev.CounterInfo
	setOpt   map[nldev.PortID][]uint32
	mode     map[nldev.PortID]nldev.QPCounterMode
	qps      map[uint32][]nldev.QPCounter
	attrs    map[string][]*uverbs.PortAttr
	verbsErr error
	evs      chan []nldev.Event
	noMon    bool
	closed   bool
}

func newFakeKernel() *fakeKernel {
	sys := filepath.Join("testdata", "sysfs", "class", "infiniband")
	guid := ib.GUIDFromUint64(0x0c42a10300658d48)
	k := &fakeKernel{
		snap: &device.Snapshot{Devices: []device.Device{
			{
				Device:   uverbs.Device{Name: "mlx5_0", Index: 1, DriverID: 1, Uverbs: "uverbs0", NodeType: ib.NodeCA},
				Protocol: nldev.ProtocolIB, NodeGUID: guid, SysImageGUID: guid,
				FirmwareVersion: "16.35.2000", Parent: device.Parent{Bus: "pci", Name: "0000:03:00.0"},
				SysfsPath: filepath.Join(sys, "mlx5_0"),
				Ports: []device.Port{{Number: 1, State: ib.PortActive, PhysState: ib.PhysLinkUp,
					LinkLayer: ib.LinkLayerInfiniBand, LID: 0x12, SMLID: 1}},
			},
			{
				Device:   uverbs.Device{Name: "mlx5_1", Index: 2, DriverID: 1, Uverbs: "uverbs1", NodeType: ib.NodeCA},
				Protocol: nldev.ProtocolRoCE, FirmwareVersion: "16.35.2000",
				Parent:    device.Parent{Bus: "pci", Name: "0000:03:00.1"},
				SysfsPath: filepath.Join(sys, "mlx5_1"),
				Ports: []device.Port{{Number: 1, State: ib.PortDown, PhysState: ib.PhysDisabled,
					LinkLayer: ib.LinkLayerEthernet, Netdev: "eth1", NetdevIndex: 4}},
			},
		}},
		counters: map[nldev.PortID][]nldev.Counter{
			{Dev: 1, Port: 1}: {{Name: "rx_write_requests", Value: 11}, {Name: "out_of_sequence", Value: 3}, {Name: "lifespan", Value: 10}},
			{Dev: 2, Port: 1}: {{Name: "rx_write_requests", Value: 0}, {Name: "np_cnp_sent", Value: 5}},
		},
		ctrErr: map[nldev.PortID]error{},
		summary: []nldev.ResourceSummary{
			{DevIndex: 1, DevName: "mlx5_0", Counts: []nldev.ResourceCount{{Type: nldev.ResourcePD, Count: 2}, {Type: nldev.ResourceQP, Count: 5}}},
			{DevIndex: 2, DevName: "mlx5_1", Counts: []nldev.ResourceCount{{Type: nldev.ResourcePD, Count: 1}, {Type: nldev.ResourceQP, Count: 1}}},
		},
		status: map[nldev.PortID][]nldev.CounterInfo{
			{Dev: 1, Port: 1}: {{Name: "rx_write_requests", Index: 0}, {Name: "cc_rx_ce_pkts", Index: 1, Optional: true},
				{Name: "cc_rx_cnp_pkts", Index: 2, Optional: true, Enabled: true}},
		},
		setOpt: map[nldev.PortID][]uint32{},
		mode:   map[nldev.PortID]nldev.QPCounterMode{},
		qps:    map[uint32][]nldev.QPCounter{},
		attrs: map[string][]*uverbs.PortAttr{
			"mlx5_0": {{ActiveMTU: ib.MTU4096, MaxMTU: ib.MTU4096}},
			"mlx5_1": {{ActiveMTU: ib.MTU1024, MaxMTU: ib.MTU4096}},
		},
		evs: make(chan []nldev.Event, 4),
	}
	return k
}

func (k *fakeKernel) devices() (*device.Snapshot, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.listErr != nil {
		return nil, k.listErr
	}
	s := *k.snap
	s.Devices = append([]device.Device(nil), s.Devices...)
	for i := range s.Devices {
		s.Devices[i].Ports = append([]device.Port(nil), s.Devices[i].Ports...)
	}
	return &s, nil
}

func (k *fakeKernel) portCounters(ports []nldev.PortID) ([][]nldev.Counter, []error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	ctrs, errs := make([][]nldev.Counter, len(ports)), make([]error, len(ports))
	for i, p := range ports {
		if err := k.ctrErr[p]; err != nil {
			errs[i] = err
			continue
		}
		c, ok := k.counters[p]
		if !ok {
			errs[i] = nldev.ErrNoCounters
		}
		ctrs[i] = c
	}
	return ctrs, errs
}

func (k *fakeKernel) resources() ([]nldev.ResourceSummary, error) { return k.summary, nil }

func (k *fakeKernel) counterStatus(dev, port uint32) ([]nldev.CounterInfo, error) {
	s, ok := k.status[nldev.PortID{Dev: dev, Port: port}]
	if !ok {
		return nil, nldev.ErrNoCounters
	}
	return s, nil
}

func (k *fakeKernel) setOptionalCounters(dev, port uint32, idx []uint32) error {
	p := nldev.PortID{Dev: dev, Port: port}
	k.setOpt[p] = idx
	for i, ci := range k.status[p] {
		if ci.Optional {
			k.status[p][i].Enabled = false
			for _, x := range idx {
				if x == ci.Index {
					k.status[p][i].Enabled = true
				}
			}
		}
	}
	return nil
}

func (k *fakeKernel) qpCounterMode(dev, port uint32) (nldev.QPCounterMode, error) {
	return k.mode[nldev.PortID{Dev: dev, Port: port}], nil
}

func (k *fakeKernel) setQPCounterAuto(dev, port uint32, mask nldev.AutoModeMask) error {
	m := nldev.QPCounterMode{Mode: nldev.CounterModeNone}
	if mask != 0 {
		m = nldev.QPCounterMode{Mode: nldev.CounterModeAuto, Mask: mask}
	}
	k.mode[nldev.PortID{Dev: dev, Port: port}] = m
	return nil
}

func (k *fakeKernel) qpCounters(dev uint32) ([]nldev.QPCounter, error) { return k.qps[dev], nil }

func (k *fakeKernel) queryPorts(d device.Device) ([]*uverbs.PortAttr, error) {
	if k.verbsErr != nil {
		return nil, k.verbsErr
	}
	a, ok := k.attrs[d.Name]
	if !ok {
		return nil, fmt.Errorf("no verbs for %s", d.Name)
	}
	return a, nil
}

func (k *fakeKernel) monitor() (events, error) {
	if k.noMon {
		return nil, fmt.Errorf("RDMA monitoring needs Linux 6.12: %w", ib.ErrNotSupported)
	}
	return fakeEvents{k.evs}, nil
}

func (k *fakeKernel) close() error { k.closed = true; return nil }

type fakeEvents struct{ c chan []nldev.Event }

func (e fakeEvents) Receive(ctx context.Context) ([]nldev.Event, error) {
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case evs, ok := <-e.c:
		if !ok {
			return nil, errors.New("closed")
		}
		return evs, nil
	}
}

func (e fakeEvents) Close() error { return nil }
