package nldev

import (
	"errors"
	"fmt"

	"github.com/mdlayher/netlink"

	"github.com/rdmastack/rdmastack/nldev/internal/nlabi"
)

// CounterInfo describes one hardware counter of a port as
// RDMA_NLDEV_CMD_STAT_GET_STATUS reports it (Linux 5.16).
type CounterInfo struct {
	Name  string // RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY_NAME
	Index uint32 // RDMA_NLDEV_ATTR_STAT_HWCOUNTER_INDEX: what SetOptionalCounters takes

	// Optional counters can be enabled and disabled; the kernel sends
	// RDMA_NLDEV_ATTR_STAT_HWCOUNTER_DYNAMIC for them only, with whether
	// the counter is enabled. Other counters are always on.
	Optional bool
	Enabled  bool
}

// CounterStatus lists every hardware counter of port port of device dev
// with its index and, for optional counters, whether it is enabled. On a
// kernel older than 5.16 the error matches ErrNotSupported; on a driver
// without hardware counters it matches ErrNoCounters.
func (c *Client) CounterStatus(dev, port uint32) ([]CounterInfo, error) {
	op := fmt.Sprintf("get counter status of port %d of device %d", port, dev)
	if port == 0 {
		return nil, invalid(op, "ports are numbered from 1")
	}
	return c.counterStatus(op, dev, port)
}

func (c *Client) counterStatus(op string, dev, port uint32) ([]CounterInfo, error) {
	// STAT_GET_STATUS is strict-parsed before Linux 6.12: device and port
	// only.
	msgs, err := c.execute(request{op: op, cmd: nlabi.RDMA_NLDEV_CMD_STAT_GET_STATUS, attrs: devPortAttrs(dev, port)})
	if err != nil {
		if !isEINVAL(err) {
			return nil, err
		}
		// EINVAL: no such device or port, no counters, or a kernel
		// without the command. The port's counters tell which.
		if _, cerr := c.PortCounters(dev, port); cerr != nil {
			var ne *Error
			if errors.Is(cerr, ErrNoCounters) && errors.As(cerr, &ne) {
				return nil, &Error{Op: op, Err: ne.Err, Message: ne.Message}
			}
			return nil, c.explainStatEINVAL(op, dev, port, err, false)
		}
		return nil, &Error{Op: op, Err: fmt.Errorf("counter status needs Linux 5.16: %w (%w)", ErrNotSupported, err)}
	}
	if len(msgs) != 1 {
		return nil, &Error{Op: op, Err: fmt.Errorf("kernel sent %d replies, want 1: %w", len(msgs), errProto)}
	}
	cs, err := decodeCounterStatus(msgs[0])
	if err != nil {
		return nil, wrap(op, err)
	}
	return cs, nil
}

func decodeCounterStatus(b []byte) ([]CounterInfo, error) {
	ad, err := netlink.NewAttributeDecoder(b)
	if err != nil {
		return nil, err
	}
	var out []CounterInfo
	var haveTable bool
	for ad.Next() {
		if ad.Type() != nlabi.RDMA_NLDEV_ATTR_STAT_HWCOUNTERS {
			continue
		}
		haveTable = true
		out = []CounterInfo{}
		ad.Nested(func(tad *netlink.AttributeDecoder) error {
			for tad.Next() {
				if tad.Type() != nlabi.RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY {
					continue
				}
				var ci CounterInfo
				var haveName, haveIndex bool
				tad.Nested(func(ead *netlink.AttributeDecoder) error {
					for ead.Next() {
						switch ead.Type() {
						case nlabi.RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY_NAME:
							ci.Name, haveName = ead.String(), true
						case nlabi.RDMA_NLDEV_ATTR_STAT_HWCOUNTER_INDEX:
							ci.Index, haveIndex = ead.Uint32(), true
						case nlabi.RDMA_NLDEV_ATTR_STAT_HWCOUNTER_DYNAMIC:
							ci.Optional, ci.Enabled = true, ead.Uint8() != 0
						}
					}
					return ead.Err()
				})
				if tad.Err() != nil {
					break
				}
				if !haveName || !haveIndex {
					return fmt.Errorf("counter entry without a name or index: %w", errProto)
				}
				out = append(out, ci)
			}
			return tad.Err()
		})
	}
	if err := ad.Err(); err != nil {
		return nil, fmt.Errorf("decode counter status: %w", err)
	}
	if !haveTable {
		return nil, fmt.Errorf("decode counter status: reply lacks the counter table: %w", errProto)
	}
	return out, nil
}

// SetOptionalCounters enables exactly the optional counters with the given
// indexes (CounterInfo.Index) on port port of device dev and disables the
// other optional counters; no indexes disables them all
// (RDMA_NLDEV_CMD_STAT_SET with a STAT_HWCOUNTERS list; needs
// CAP_NET_ADMIN). An index that is not one of the port's optional counters
// is rejected before anything is changed.
func (c *Client) SetOptionalCounters(dev, port uint32, indexes []uint32) error {
	op := fmt.Sprintf("set optional counters %v on port %d of device %d", indexes, port, dev)
	if port == 0 {
		return invalid(op, "ports are numbered from 1")
	}
	status, err := c.counterStatus(op, dev, port)
	if err != nil {
		return err
	}
	for _, i := range indexes {
		if err := checkOptional(op, status, i); err != nil {
			return err
		}
	}
	_, err = c.execute(request{op: op, cmd: nlabi.RDMA_NLDEV_CMD_STAT_SET, attrs: func(ae *netlink.AttributeEncoder) {
		devPortAttrs(dev, port)(ae)
		ae.Nested(nlabi.RDMA_NLDEV_ATTR_STAT_HWCOUNTERS, func(nae *netlink.AttributeEncoder) error {
			for _, i := range indexes {
				nae.Uint32(nlabi.RDMA_NLDEV_ATTR_STAT_HWCOUNTER_INDEX, i)
			}
			return nil
		})
	}})
	return c.explainStatEINVAL(op, dev, port, err, false)
}

// UnsetOptionalCounters disables every optional counter of port port of
// device dev.
func (c *Client) UnsetOptionalCounters(dev, port uint32) error {
	return c.SetOptionalCounters(dev, port, nil)
}

func checkOptional(op string, status []CounterInfo, index uint32) error {
	for _, ci := range status {
		if ci.Index != index {
			continue
		}
		if !ci.Optional {
			return invalid(op, fmt.Sprintf("counter %d (%s) is not optional", index, ci.Name))
		}
		return nil
	}
	return &Error{Op: op, Err: fmt.Errorf("no counter with index %d: %w", index, errNotExistEINVAL)}
}
