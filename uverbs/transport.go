package uverbs

import (
	"github.com/rdmastack/rdmastack/ib"
)

// Transport is a device's transport type as libibverbs derives it from
// the node type (enum ibv_transport_type).
type Transport int

// Transports.
const (
	TransportUnknown     Transport = -1
	TransportIB          Transport = 0
	TransportIWARP       Transport = 1
	TransportUSNIC       Transport = 2
	TransportUSNICUDP    Transport = 3
	TransportUnspecified Transport = 4
)

// TransportOf is the transport of a device of node type n, as
// libibverbs derives it.
func TransportOf(n ib.NodeType) Transport {
	switch n {
	case ib.NodeCA, ib.NodeSwitch, ib.NodeRouter:
		return TransportIB
	case ib.NodeRNIC:
		return TransportIWARP
	case ib.NodeUSNIC:
		return TransportUSNIC
	case ib.NodeUSNICUDP:
		return TransportUSNICUDP
	case ib.NodeUnspecified:
		return TransportUnspecified
	}
	return TransportUnknown
}

// Transport is the device's transport, as libibverbs derives it from its
// node type.
func (d Device) Transport() Transport { return TransportOf(d.NodeType) }

// String returns rdma-core's name ("InfiniBand", "iWARP", ...).
func (t Transport) String() string {
	switch t {
	case TransportIB:
		return "InfiniBand"
	case TransportIWARP:
		return "iWARP"
	case TransportUSNIC:
		return "usNIC"
	case TransportUSNICUDP:
		return "usNIC UDP"
	case TransportUnspecified:
		return "unspecified"
	}
	return "invalid transport"
}
