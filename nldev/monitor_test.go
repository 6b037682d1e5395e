package nldev

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/mdlayher/netlink"
	"github.com/mdlayher/netlink/nltest"
	"golang.org/x/sys/unix"

	"github.com/rdmastack/rdmastack/nldev/internal/nlabi"
)

func eventMsg(t *testing.T, typ EventType, attrs func(*netlink.AttributeEncoder)) netlink.Message {
	t.Helper()
	ae := netlink.NewAttributeEncoder()
	if attrs != nil {
		attrs(ae)
	}
	ae.Uint8(nlabi.RDMA_NLDEV_ATTR_EVENT_TYPE, uint8(typ))
	b, err := ae.Encode()
	if err != nil {
		t.Fatal(err)
	}
	return netlink.Message{Header: netlink.Header{Type: netlink.HeaderType(nlabi.GetType(nlabi.RDMA_NL_NLDEV, nlabi.RDMA_NLDEV_CMD_MONITOR))}, Data: b}
}

func TestMonitorReceive(t *testing.T) {
	sent := false
	conn := nltest.Dial(func(req []netlink.Message) ([]netlink.Message, error) {
		if req != nil || sent {
			return nil, unix.EAGAIN
		}
		sent = true
		return []netlink.Message{
			eventMsg(t, EventNetdevAttach, func(ae *netlink.AttributeEncoder) {
				ae.Uint32(nlabi.RDMA_NLDEV_ATTR_DEV_INDEX, 3)
				ae.String(nlabi.RDMA_NLDEV_ATTR_DEV_NAME, "rxe3")
				ae.Uint32(nlabi.RDMA_NLDEV_ATTR_PORT_INDEX, 1)
				ae.Uint32(nlabi.RDMA_NLDEV_ATTR_NDEV_INDEX, 9)
				ae.String(nlabi.RDMA_NLDEV_ATTR_NDEV_NAME, "veth3")
			}),
			// Something else multicast on the group is skipped.
			{Header: netlink.Header{Type: netlink.HeaderType(nlabi.GetType(nlabi.RDMA_NL_LS, 1))}, Data: []byte{4, 0, 0, 0}},
			eventMsg(t, EventNetdevRename, func(ae *netlink.AttributeEncoder) {
				ae.Uint32(nlabi.RDMA_NLDEV_ATTR_NDEV_INDEX, 9)
				ae.String(nlabi.RDMA_NLDEV_ATTR_NDEV_NAME, "eth9")
			}),
		}, nil
	})
	m := &Monitor{c: conn}
	t.Cleanup(func() { m.Close() })
	evs, err := m.Receive(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want := []Event{
		{Type: EventNetdevAttach, DevIndex: 3, DevName: "rxe3", Port: 1, NetdevIndex: 9, Netdev: "veth3",
			HasDev: true, HasPort: true, HasNetdevIndex: true, HasNetdev: true},
		{Type: EventNetdevRename, NetdevIndex: 9, Netdev: "eth9", HasNetdevIndex: true, HasNetdev: true},
	}
	if diff := cmp.Diff(want, evs); diff != "" {
		t.Fatalf("events (-want +got):\n%s", diff)
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := m.Receive(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("Receive with a cancelled context = %v", err)
	}
	m.Close()
	if _, err := m.Receive(context.Background()); !errors.Is(err, unix.EBADF) {
		t.Fatalf("Receive after Close = %v, want EBADF", err)
	}
}

func TestEventTypeString(t *testing.T) {
	for typ, want := range map[EventType]string{EventRegister: "REGISTER", EventNetdevRename: "NETDEV_RENAME", 9: "UNKNOWN 0x09"} {
		if got := typ.String(); got != want {
			t.Errorf("%d: %q, want %q", typ, got, want)
		}
	}
}

func FuzzDecodeEvent(f *testing.F) {
	for _, b := range fixtureSeeds(f) {
		f.Add(b)
	}
	f.Add([]byte{5, 0, 102, 0, 1, 0, 0, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		ev, err := decodeEvent(b)
		if err == nil && !ev.HasDev && ev.DevIndex != 0 {
			t.Fatalf("device index %d without the attribute", ev.DevIndex)
		}
	})
}
