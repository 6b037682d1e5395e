package nldev

import (
	"errors"
	"fmt"
	"os"

	"github.com/mdlayher/netlink"
	"golang.org/x/sys/unix"

	"github.com/rdmastack/rdmastack/nldev/internal/nlabi"
)

// ErrNoCounters is matched by the error for a port whose driver keeps no
// hardware counters: the kernel answers RDMA_NLDEV_CMD_STAT_GET with
// EINVAL, which the error also matches.
var ErrNoCounters = errors.New("the device's driver has no hardware counters")

// Counter is one hardware counter of a port, a QP counter or an MR
// (RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY).
type Counter struct {
	Name  string // RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY_NAME
	Value uint64 // RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY_VALUE
}

// PortCounters returns the hardware counters of port port (from 1) of the
// device with index dev, in the driver's order (RDMA_NLDEV_CMD_STAT_GET
// without RDMA_NLDEV_ATTR_STAT_RES). Each value is the port's own count
// plus that of every QP counter bound on the port; optional counters that
// are disabled are left out (see CounterStatus).
//
// Port 0 is rejected before anything is sent. A device or port the kernel
// does not have gives an error matching os.ErrNotExist; a driver without
// hardware counters one matching ErrNoCounters.
func (c *Client) PortCounters(dev, port uint32) ([]Counter, error) {
	op := fmt.Sprintf("get counters of port %d of device %d", port, dev)
	if port == 0 {
		return nil, invalid(op, "ports are numbered from 1")
	}
	// STAT_GET is strict-parsed before Linux 6.12: send only what it needs.
	msgs, err := c.execute(request{op: op, cmd: nlabi.RDMA_NLDEV_CMD_STAT_GET, attrs: devPortAttrs(dev, port)})
	if err != nil {
		return nil, c.explainStatEINVAL(op, dev, port, err, true)
	}
	if len(msgs) != 1 {
		return nil, &Error{Op: op, Err: fmt.Errorf("kernel sent %d replies, want 1: %w", len(msgs), errProto)}
	}
	ps, err := decodePortCounters(msgs[0])
	if err != nil {
		return nil, wrap(op, err)
	}
	return ps.Counters, nil
}

// portCounters is one RDMA_NLDEV_CMD_STAT_GET reply for a port.
type portCounters struct {
	DevIndex uint32
	DevName  string
	Port     uint32
	Counters []Counter
}

func decodePortCounters(b []byte) (portCounters, error) {
	ad, err := netlink.NewAttributeDecoder(b)
	if err != nil {
		return portCounters{}, err
	}
	var pc portCounters
	var haveDev, havePort, haveTable bool
	for ad.Next() {
		switch ad.Type() {
		case nlabi.RDMA_NLDEV_ATTR_DEV_INDEX:
			pc.DevIndex, haveDev = ad.Uint32(), true
		case nlabi.RDMA_NLDEV_ATTR_DEV_NAME:
			pc.DevName = ad.String()
		case nlabi.RDMA_NLDEV_ATTR_PORT_INDEX:
			pc.Port, havePort = ad.Uint32(), true
		case nlabi.RDMA_NLDEV_ATTR_STAT_HWCOUNTERS:
			haveTable = true
			ad.Nested(func(nad *netlink.AttributeDecoder) error {
				pc.Counters, err = decodeHWCounters(nad)
				return err
			})
		}
	}
	if err := ad.Err(); err != nil {
		return portCounters{}, fmt.Errorf("decode port counters: %w", err)
	}
	if !haveDev || !havePort || !haveTable {
		return portCounters{}, fmt.Errorf("decode port counters: reply lacks the device, the port or the counter table: %w", errProto)
	}
	return pc, nil
}

// decodeHWCounters reads the entries of an RDMA_NLDEV_ATTR_STAT_HWCOUNTERS
// table: {ENTRY{NAME, VALUE}}. Every entry must have both.
func decodeHWCounters(ad *netlink.AttributeDecoder) ([]Counter, error) {
	out := []Counter{}
	for ad.Next() {
		if ad.Type() != nlabi.RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY {
			continue
		}
		var ctr Counter
		var haveName, haveValue bool
		ad.Nested(func(ead *netlink.AttributeDecoder) error {
			for ead.Next() {
				switch ead.Type() {
				case nlabi.RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY_NAME:
					ctr.Name, haveName = ead.String(), true
				case nlabi.RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY_VALUE:
					ctr.Value, haveValue = ead.Uint64(), true
				}
			}
			return ead.Err()
		})
		if !haveName || !haveValue {
			if err := ad.Err(); err != nil {
				return nil, err
			}
			return nil, fmt.Errorf("counter entry without a name or value: %w", errProto)
		}
		out = append(out, ctr)
	}
	return out, ad.Err()
}

// devPortAttrs encodes the device and port index, all a port's STAT_GET
// needs.
func devPortAttrs(dev, port uint32) func(*netlink.AttributeEncoder) {
	return func(ae *netlink.AttributeEncoder) {
		ae.Uint32(nlabi.RDMA_NLDEV_ATTR_DEV_INDEX, dev)
		ae.Uint32(nlabi.RDMA_NLDEV_ATTR_PORT_INDEX, port)
	}
}

// explainStatEINVAL tells apart what a statistics command's EINVAL means:
// an unknown device or port (the error then matches os.ErrNotExist), or,
// when counters is set and the port exists, a driver without hardware
// counters (ErrNoCounters). Other errors pass unchanged.
func (c *Client) explainStatEINVAL(op string, dev, port uint32, err error, counters bool) error {
	if !isEINVAL(err) {
		return err
	}
	if _, perr := c.Port(dev, port); errors.Is(perr, os.ErrNotExist) {
		return mapNotFound(op, fmt.Sprintf("no port %d on device %d", port, dev), err)
	} else if perr != nil {
		return err
	}
	if counters {
		e := &Error{Op: op, Err: fmt.Errorf("%w (%w)", ErrNoCounters, unix.EINVAL)}
		var ne *Error
		if errors.As(err, &ne) {
			e.Message = ne.Message
		}
		return e
	}
	return err
}
