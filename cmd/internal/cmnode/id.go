package cmnode

import (
	"github.com/rdmastack/rdmastack/ib"
	"github.com/rdmastack/rdmastack/rdma"
)

// QPType is the QP type librdmacm's rdma_create_id gives an id of port
// space ps: UD for the UDP and IPoIB spaces, RC for the others.
func QPType(ps rdma.PortSpace) ib.QPType {
	if ps == rdma.PortSpaceUDP || ps == rdma.PortSpaceIPoIB {
		return ib.QPTypeUD
	}
	return ib.QPTypeRC
}
