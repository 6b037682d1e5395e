package ib

import "fmt"

// NodeType is the kind of an RDMA device (enum rdma_node_type in the
// kernel's include/rdma/ib_verbs.h; the values RDMA netlink reports in
// RDMA_NLDEV_ATTR_DEV_NODE_TYPE and sysfs in node_type).
type NodeType uint8

// Node types.
const (
	NodeUnknown     NodeType = 0
	NodeCA          NodeType = 1 // RDMA_NODE_IB_CA
	NodeSwitch      NodeType = 2 // RDMA_NODE_IB_SWITCH
	NodeRouter      NodeType = 3 // RDMA_NODE_IB_ROUTER
	NodeRNIC        NodeType = 4 // RDMA_NODE_RNIC (iWARP)
	NodeUSNIC       NodeType = 5 // RDMA_NODE_USNIC
	NodeUSNICUDP    NodeType = 6 // RDMA_NODE_USNIC_UDP
	NodeUnspecified NodeType = 7 // RDMA_NODE_UNSPECIFIED
)

var nodeTypeNames = [...]string{"unknown", "ca", "switch", "router", "rnic", "usnic", "usnic_udp", "unspecified"}

// String returns iproute2's name for the node type ("ca", "rnic", ...),
// and "unknown" for values it does not know, as iproute2 does.
func (t NodeType) String() string {
	if int(t) < len(nodeTypeNames) {
		return nodeTypeNames[t]
	}
	return "unknown"
}

// GoString makes %#v print the number too, so unknown values stay visible.
func (t NodeType) GoString() string { return fmt.Sprintf("ib.NodeType(%d)", uint8(t)) }
