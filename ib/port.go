package ib

import "fmt"

// PortState is a port's logical state (enum ib_port_state in the kernel's
// include/rdma/ib_verbs.h; IBA PortInfo:PortState).
type PortState uint8

// Port states.
const (
	PortNOP         PortState = 0 // IB_PORT_NOP
	PortDown        PortState = 1 // IB_PORT_DOWN
	PortInit        PortState = 2 // IB_PORT_INIT
	PortArmed       PortState = 3 // IB_PORT_ARMED
	PortActive      PortState = 4 // IB_PORT_ACTIVE
	PortActiveDefer PortState = 5 // IB_PORT_ACTIVE_DEFER
)

var portStateNames = [...]string{"NOP", "DOWN", "INIT", "ARMED", "ACTIVE", "ACTIVE_DEFER"}

// String returns iproute2's name for the state ("ACTIVE"), or "UNKNOWN".
func (s PortState) String() string {
	if int(s) < len(portStateNames) {
		return portStateNames[s]
	}
	return "UNKNOWN"
}

// GoString keeps the number visible for values without a name.
func (s PortState) GoString() string { return fmt.Sprintf("ib.PortState(%d)", uint8(s)) }

// PhysState is a port's physical state (enum ib_port_phys_state; IBA
// PortInfo:PortPhysicalState, with OPA's extra values).
type PhysState uint8

// Physical port states.
const (
	PhysNOP              PhysState = 0
	PhysSleep            PhysState = 1
	PhysPolling          PhysState = 2
	PhysDisabled         PhysState = 3
	PhysTraining         PhysState = 4 // "ARMED" in iproute2's table (PortConfigurationTraining)
	PhysLinkUp           PhysState = 5
	PhysLinkErrorRecover PhysState = 6
	PhysPhyTest          PhysState = 7
	PhysOPAOffline       PhysState = 9
	PhysOPATest          PhysState = 11
)

var physStateNames = [...]string{"NOP", "SLEEP", "POLLING", "DISABLED", "ARMED", "LINK_UP",
	"LINK_ERROR_RECOVER", "PHY_TEST", "UNKNOWN", "OPA_OFFLINE", "UNKNOWN", "OPA_TEST"}

// String returns iproute2's name for the physical state ("LINK_UP"), or
// "UNKNOWN".
func (s PhysState) String() string {
	if int(s) < len(physStateNames) {
		return physStateNames[s]
	}
	return "UNKNOWN"
}

// GoString keeps the number visible for values without a name.
func (s PhysState) GoString() string { return fmt.Sprintf("ib.PhysState(%d)", uint8(s)) }

// LinkLayer is a port's link layer (enum rdma_link_layer in the kernel's
// include/rdma/ib_verbs.h, the link_layer of struct
// ib_uverbs_query_port_resp; libibverbs' IBV_LINK_LAYER_*). QUERY_PORT
// reports it, and sysfs in ports/N/link_layer.
type LinkLayer uint8

// Link layers.
const (
	LinkLayerUnspecified LinkLayer = 0 // IB_LINK_LAYER_UNSPECIFIED
	LinkLayerInfiniBand  LinkLayer = 1 // IB_LINK_LAYER_INFINIBAND
	LinkLayerEthernet    LinkLayer = 2 // IB_LINK_LAYER_ETHERNET
)

// String returns the name sysfs and rdma-core print ("InfiniBand",
// "Ethernet"), "Unspecified" for 0 and "Unknown" for other values.
func (l LinkLayer) String() string {
	switch l {
	case LinkLayerUnspecified:
		return "Unspecified"
	case LinkLayerInfiniBand:
		return "InfiniBand"
	case LinkLayerEthernet:
		return "Ethernet"
	}
	return "Unknown"
}

// GoString keeps the number visible for values without a name.
func (l LinkLayer) GoString() string { return fmt.Sprintf("ib.LinkLayer(%d)", uint8(l)) }
