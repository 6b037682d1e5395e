package nldev

import (
	"testing"

	"github.com/rdmastack/rdmastack/ib"
)

// The fixtures were captured in the VM with two rxe devices on veth0 and
// veth1 (see TestIntegrationCaptureFixtures); these tests pin what each
// kernel sends and that the decoders read all of it.

func TestFixtureDevices(t *testing.T) {
	all := fixtures(t, "dev-dump")
	if len(all) < 2 {
		t.Fatalf("found %d kernels' dev-dump fixtures, want 6.1 and 6.12", len(all))
	}
	for kernel, msgs := range all {
		if len(msgs) != 2 {
			t.Fatalf("%s: %d devices, want 2", kernel, len(msgs))
		}
		for i, m := range msgs {
			d, err := decodeDevice(m.Data)
			if err != nil {
				t.Fatalf("%s: %v", kernel, err)
			}
			if d.Index != uint32(i) || d.Name != "rxe"+itoa(i) || d.Ports != 1 || d.NodeType != ib.NodeCA ||
				d.Protocol != ProtocolRoCE || d.NodeGUID.IsZero() || d.NodeGUID != d.SysImageGUID ||
				d.AdaptiveModeration == nil || *d.AdaptiveModeration || d.Caps == 0 {
				t.Errorf("%s: device %d = %+v", kernel, i, d)
			}
			// rdma link add names the device, and kernels from 6.11 say so.
			newer := kernel >= "6.11"
			if want := map[bool]NameAssignType{true: NameAssignUser, false: NameAssignUnknown}[newer]; d.NameAssignType != want {
				t.Errorf("%s: name assign type %v, want %v", kernel, d.NameAssignType, want)
			}
		}
	}
}

func TestFixturePorts(t *testing.T) {
	for kernel, msgs := range fixtures(t, "port-dump") {
		if len(msgs) != 1 {
			t.Fatalf("%s: %d ports, want 1", kernel, len(msgs))
		}
		p, err := decodePort(msgs[0].Data)
		if err != nil {
			t.Fatalf("%s: %v", kernel, err)
		}
		if p.DevIndex != 0 || p.DevName != "rxe0" || p.Index != 1 || p.State != ib.PortActive ||
			p.PhysState != ib.PhysLinkUp || p.IB != nil || p.Netdev != "veth0" || p.NetdevIndex == 0 {
			t.Errorf("%s: port %+v", kernel, p)
		}
	}
}

func TestFixtureSystem(t *testing.T) {
	for kernel, msgs := range fixtures(t, "sys-get") {
		s, err := decodeSystem(msgs[0].Data)
		if err != nil {
			t.Fatalf("%s: %v", kernel, err)
		}
		if s.NetnsMode != NetnsShared || s.CopyOnFork == nil || !*s.CopyOnFork || s.PrivilegedQKey == nil {
			t.Errorf("%s: %+v", kernel, s)
		}
		if (s.Monitor != nil) != (kernel >= "6.12") {
			t.Errorf("%s: monitor mode %v", kernel, s.Monitor)
		}
	}
}

func TestFixtureChardev(t *testing.T) {
	for kernel, msgs := range fixtures(t, "chardev-uverbs") {
		ch, err := decodeChardev(msgs[0].Data)
		if err != nil {
			t.Fatalf("%s: %v", kernel, err)
		}
		if ch.Name != "uverbs0" || !ch.HasDriverID || ch.DriverID != ib.DriverRXE || ch.ABI != 2 || ch.Dev == 0 {
			t.Errorf("%s: %+v", kernel, ch)
		}
	}
}

func FuzzDecodeSystem(f *testing.F) {
	for _, b := range fixtureSeeds(f) {
		f.Add(b)
	}
	// A mode other than 0 needs an attribute: its 4-byte header and the
	// u8. The last attribute may lack its padding (the kernel's nla_ok
	// takes it so, as netlink's decoder does), so 5 bytes are enough.
	f.Fuzz(func(t *testing.T, b []byte) {
		if s, err := decodeSystem(b); err == nil && s.NetnsMode != 0 && len(b) < 5 {
			t.Fatalf("netns mode %d from %d bytes", s.NetnsMode, len(b))
		}
	})
}

func FuzzDecodeChardev(f *testing.F) {
	for _, b := range fixtureSeeds(f) {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if ch, err := decodeChardev(b); err == nil && ch.Name == "" && len(b) < 4 {
			t.Fatalf("char device without a name from %x", b)
		}
	})
}
