package cmnode

import (
	"testing"

	"github.com/rdmastack/rdmastack/ib"
	"github.com/rdmastack/rdmastack/rdma"
)

func TestQPType(t *testing.T) {
	for ps, want := range map[rdma.PortSpace]ib.QPType{
		rdma.PortSpaceUDP: ib.QPTypeUD, rdma.PortSpaceIPoIB: ib.QPTypeUD,
		rdma.PortSpaceTCP: ib.QPTypeRC, rdma.PortSpaceIB: ib.QPTypeRC,
	} {
		if got := QPType(ps); got != want {
			t.Errorf("QPType(%v) = %v, want %v", ps, got, want)
		}
	}
}
