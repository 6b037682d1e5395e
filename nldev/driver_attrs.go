package nldev

import (
	"fmt"

	"github.com/mdlayher/netlink"

	"github.com/rdmastack/rdmastack/nldev/internal/nlabi"
)

// DriverAttr is one driver-specific attribute of a tracked object: the
// kernel sends a table (RDMA_NLDEV_ATTR_DRIVER) of {key, optional print
// type, value} triples.
type DriverAttr struct {
	Key       string          // RDMA_NLDEV_ATTR_DRIVER_STRING
	PrintType DriverPrintType // RDMA_NLDEV_ATTR_DRIVER_PRINT_TYPE; DriverPrintDefault when absent
	Value     DriverValue     // DriverString, DriverS32, DriverU32, DriverS64 or DriverU64
}

// DriverPrintType is how the driver wants a value shown (enum
// rdma_nldev_print_type).
type DriverPrintType uint8

// Print types.
const (
	DriverPrintDefault DriverPrintType = nlabi.RDMA_NLDEV_PRINT_TYPE_UNSPEC
	DriverPrintHex     DriverPrintType = nlabi.RDMA_NLDEV_PRINT_TYPE_HEX
)

func (t DriverPrintType) String() string {
	switch t {
	case DriverPrintDefault:
		return "default"
	case DriverPrintHex:
		return "hex"
	}
	return fmt.Sprintf("DriverPrintType(%d)", uint8(t))
}

// DriverValue is the value of a driver attribute; its dynamic type says
// which attribute carried it.
type DriverValue interface{ isDriverValue() }

type (
	DriverString string // RDMA_NLDEV_ATTR_DRIVER_STRING
	DriverS32    int32  // RDMA_NLDEV_ATTR_DRIVER_S32
	DriverU32    uint32 // RDMA_NLDEV_ATTR_DRIVER_U32
	DriverS64    int64  // RDMA_NLDEV_ATTR_DRIVER_S64
	DriverU64    uint64 // RDMA_NLDEV_ATTR_DRIVER_U64
)

func (DriverString) isDriverValue() {}
func (DriverS32) isDriverValue()    {}
func (DriverU32) isDriverValue()    {}
func (DriverS64) isDriverValue()    {}
func (DriverU64) isDriverValue()    {}

// decodeDriverAttrs reads the flat triples of an RDMA_NLDEV_ATTR_DRIVER
// nest. A value without a key, or a key left without a value, is dropped.
// The result is never nil.
func decodeDriverAttrs(ad *netlink.AttributeDecoder) []DriverAttr {
	var (
		out     []DriverAttr
		cur     DriverAttr
		haveKey bool
	)
	for ad.Next() {
		var v DriverValue
		switch ad.Type() {
		case nlabi.RDMA_NLDEV_ATTR_DRIVER_STRING:
			if !haveKey {
				cur = DriverAttr{Key: ad.String()}
				haveKey = true
				continue
			}
			v = DriverString(ad.String())
		case nlabi.RDMA_NLDEV_ATTR_DRIVER_PRINT_TYPE:
			cur.PrintType = DriverPrintType(ad.Uint8())
			continue
		case nlabi.RDMA_NLDEV_ATTR_DRIVER_S32:
			v = DriverS32(ad.Int32())
		case nlabi.RDMA_NLDEV_ATTR_DRIVER_U32:
			v = DriverU32(ad.Uint32())
		case nlabi.RDMA_NLDEV_ATTR_DRIVER_S64:
			v = DriverS64(ad.Int64())
		case nlabi.RDMA_NLDEV_ATTR_DRIVER_U64:
			v = DriverU64(ad.Uint64())
		default:
			continue // PAD and attributes this code does not know
		}
		if haveKey && ad.Err() == nil {
			cur.Value = v
			out = append(out, cur)
		}
		haveKey = false
		cur = DriverAttr{}
	}
	if out == nil {
		out = []DriverAttr{} // the kernel sent the table: non-nil, though empty
	}
	return out
}
