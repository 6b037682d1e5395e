package device

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/rdmastack/rdmastack/ib"
	"github.com/rdmastack/rdmastack/nldev"
	"github.com/rdmastack/rdmastack/uverbs"
)

func TestPortUpdate(t *testing.T) {
	umad := &nldev.Chardev{Name: "umad0"}
	p := Port{LinkLayer: ib.LinkLayerInfiniBand, Umad: umad, LID: 9, SMLID: 1}
	p.update(nldev.Port{Index: 1, State: ib.PortDown, PhysState: ib.PhysDisabled, Netdev: "ib0", NetdevIndex: 4})
	want := Port{Number: 1, State: ib.PortDown, PhysState: ib.PhysDisabled, LinkLayer: ib.LinkLayerInfiniBand,
		Netdev: "ib0", NetdevIndex: 4, Umad: umad}
	if diff := cmp.Diff(want, p); diff != "" {
		t.Errorf("update (-want +got):\n%s", diff)
	}
}

func TestSnapshotClone(t *testing.T) {
	s := &Snapshot{RdmaCM: &nldev.Chardev{Name: "rdma_cm"}, Devices: []Device{{Device: uverbs.Device{Name: "rxe0", Uverbs: "uverbs0"},
		Ports: []Port{{Netdev: "eth0", Umad: &nldev.Chardev{Name: "umad0"}}}}}}
	c := s.clone()
	if diff := cmp.Diff(s, c); diff != "" {
		t.Fatalf("clone differs:\n%s", diff)
	}
	c.RdmaCM.Name, c.Devices[0].Uverbs, c.Devices[0].Ports[0].Netdev, c.Devices[0].Ports[0].Umad.Name = "x", "x", "x", "x"
	if s.RdmaCM.Name != "rdma_cm" || s.Devices[0].Uverbs != "uverbs0" || s.Devices[0].Ports[0].Netdev != "eth0" ||
		s.Devices[0].Ports[0].Umad.Name != "umad0" {
		t.Fatalf("changing the clone changed the original: %+v", s)
	}
}
