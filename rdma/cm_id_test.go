package rdma

import (
	"testing"

	"github.com/rdmastack/rdmastack/nldev"
)

// TestPortSpace: the port spaces have the ucma ABI's values, which RDMA
// netlink reports too, and their names.
func TestPortSpace(t *testing.T) {
	for _, c := range []struct {
		ps   PortSpace
		nl   nldev.PortSpace
		name string
	}{
		{PortSpaceTCP, nldev.PortSpaceTCP, "TCP"},
		{PortSpaceUDP, nldev.PortSpaceUDP, "UDP"},
		{PortSpaceIB, nldev.PortSpaceIB, "IB"},
		{PortSpaceIPoIB, nldev.PortSpaceIPoIB, "IPoIB"},
		{PortSpace(9), nldev.PortSpace(9), "PortSpace(0x9)"},
	} {
		if uint32(c.ps) != uint32(c.nl) || c.ps.String() != c.name {
			t.Errorf("%#x: %q, want %#x %q", uint16(c.ps), c.ps.String(), uint32(c.nl), c.name)
		}
	}
}
