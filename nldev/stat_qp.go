package nldev

import (
	"errors"
	"fmt"

	"github.com/mdlayher/netlink"
	"golang.org/x/sys/unix"

	"github.com/rdmastack/rdmastack/ib"
	"github.com/rdmastack/rdmastack/nldev/internal/nlabi"
)

// QPCounter is one QP counter: a set of hardware counters that counts for
// the QPs bound to it (an RDMA_NLDEV_ATTR_STAT_COUNTER_ENTRY).
type QPCounter struct {
	DevIndex uint32      // RDMA_NLDEV_ATTR_DEV_INDEX
	DevName  string      // RDMA_NLDEV_ATTR_DEV_NAME
	Port     uint32      // RDMA_NLDEV_ATTR_PORT_INDEX; 0 when absent
	ID       uint32      // RDMA_NLDEV_ATTR_STAT_COUNTER_ID
	Mode     CounterMode // RDMA_NLDEV_ATTR_STAT_MODE: how the QPs were bound

	// QPType is the QP type an auto-mode counter groups by
	// (RDMA_NLDEV_ATTR_RES_TYPE); nil when the kernel does not say.
	QPType *ib.QPType

	// Owner is the counter's process (RDMA_NLDEV_ATTR_RES_PID) or kernel
	// user (RDMA_NLDEV_ATTR_RES_KERN_NAME), when the kernel says.
	Owner Owner

	LQPNs    []uint32  // the bound QPs (RDMA_NLDEV_ATTR_RES_QP{ENTRY{LQPN}})
	Counters []Counter // RDMA_NLDEV_ATTR_STAT_HWCOUNTERS
}

// QPCounters returns the QP counters of the device with index dev, on
// every port or, with port > 0, on that port only (an
// RDMA_NLDEV_CMD_STAT_GET dump with RDMA_NLDEV_ATTR_STAT_RES = RES_QP).
func (c *Client) QPCounters(dev, port uint32) ([]QPCounter, error) {
	op := fmt.Sprintf("dump QP counters of device %d", dev)
	if port > 0 {
		op = fmt.Sprintf("dump QP counters of port %d of device %d", port, dev)
	}
	msgs, err := c.execute(request{op: op, cmd: nlabi.RDMA_NLDEV_CMD_STAT_GET, dump: true, attrs: func(ae *netlink.AttributeEncoder) {
		ae.Uint32(nlabi.RDMA_NLDEV_ATTR_DEV_INDEX, dev)
		if port > 0 {
			ae.Uint32(nlabi.RDMA_NLDEV_ATTR_PORT_INDEX, port)
		}
		ae.Uint32(nlabi.RDMA_NLDEV_ATTR_STAT_RES, nlabi.RDMA_NLDEV_ATTR_RES_QP)
	}})
	if err != nil {
		if port == 0 {
			return nil, mapNotFound(op, fmt.Sprintf("no device with index %d", dev), err)
		}
		return nil, c.explainStatEINVAL(op, dev, port, err, false)
	}
	out := []QPCounter{}
	for _, b := range msgs {
		qc, err := decodeQPCounters(b)
		if err != nil {
			return nil, wrap(op, err)
		}
		out = append(out, qc...)
	}
	return out, nil
}

// QPCounter returns the QP counter with the given id on port port of
// device dev. An id the kernel does not have gives an error matching
// os.ErrNotExist.
func (c *Client) QPCounter(dev, port, id uint32) (QPCounter, error) {
	op := fmt.Sprintf("get QP counter %d on port %d of device %d", id, port, dev)
	if port == 0 {
		return QPCounter{}, invalid(op, "ports are numbered from 1")
	}
	msgs, err := c.execute(request{op: op, cmd: nlabi.RDMA_NLDEV_CMD_STAT_GET, attrs: func(ae *netlink.AttributeEncoder) {
		devPortAttrs(dev, port)(ae)
		ae.Uint32(nlabi.RDMA_NLDEV_ATTR_STAT_RES, nlabi.RDMA_NLDEV_ATTR_RES_QP)
		ae.Uint32(nlabi.RDMA_NLDEV_ATTR_STAT_COUNTER_ID, id)
	}})
	if err != nil {
		return QPCounter{}, c.explainStatEINVAL(op, dev, port, err, false)
	}
	if len(msgs) != 1 {
		return QPCounter{}, &Error{Op: op, Err: fmt.Errorf("kernel sent %d replies, want 1: %w", len(msgs), errProto)}
	}
	qc, err := decodeQPCounter(msgs[0])
	if err != nil {
		return QPCounter{}, wrap(op, err)
	}
	return qc, nil
}

// BindQP binds the QP with number lqpn on port port of device dev to a new
// QP counter and returns the counter's id (RDMA_NLDEV_CMD_STAT_SET in
// manual mode; needs CAP_NET_ADMIN). The kernel refuses it with EINVAL
// while the port is in auto mode, and with ENOMEM when the driver cannot
// allocate QP counters (rxe cannot).
func (c *Client) BindQP(dev, port, lqpn uint32) (uint32, error) {
	op := fmt.Sprintf("bind QP %d on port %d of device %d to a new counter", lqpn, port, dev)
	return c.bind(op, dev, port, lqpn, nil)
}

// BindQPToCounter binds the QP with number lqpn to the existing QP counter
// id on port port of device dev.
func (c *Client) BindQPToCounter(dev, port, lqpn, id uint32) error {
	op := fmt.Sprintf("bind QP %d on port %d of device %d to counter %d", lqpn, port, dev, id)
	_, err := c.bind(op, dev, port, lqpn, &id)
	return err
}

func (c *Client) bind(op string, dev, port, lqpn uint32, id *uint32) (uint32, error) {
	if port == 0 {
		return 0, invalid(op, "ports are numbered from 1")
	}
	msgs, err := c.execute(request{op: op, cmd: nlabi.RDMA_NLDEV_CMD_STAT_SET, attrs: func(ae *netlink.AttributeEncoder) {
		devPortAttrs(dev, port)(ae)
		ae.Uint32(nlabi.RDMA_NLDEV_ATTR_STAT_RES, nlabi.RDMA_NLDEV_ATTR_RES_QP)
		ae.Uint32(nlabi.RDMA_NLDEV_ATTR_STAT_MODE, nlabi.RDMA_COUNTER_MODE_MANUAL)
		ae.Uint32(nlabi.RDMA_NLDEV_ATTR_RES_LQPN, lqpn)
		if id != nil {
			ae.Uint32(nlabi.RDMA_NLDEV_ATTR_STAT_COUNTER_ID, *id)
		}
	}})
	if errors.Is(err, unix.ENOMEM) && id == nil {
		// rdma_counter_bind_qpn_alloc's answer when the driver cannot
		// allocate QP counters at all.
		return 0, &Error{Op: op, Err: fmt.Errorf("no QP counter could be allocated (drivers without QP counters, such as rxe, always answer so): %w", unix.ENOMEM)}
	}
	if err != nil {
		return 0, c.explainStatEINVAL(op, dev, port, err, false)
	}
	if len(msgs) != 1 {
		return 0, &Error{Op: op, Err: fmt.Errorf("kernel sent %d replies, want 1: %w", len(msgs), errProto)}
	}
	qc, err := decodeQPCounter(msgs[0])
	if err != nil {
		return 0, wrap(op, err)
	}
	return qc.ID, nil
}

// UnbindQP unbinds the QP with number lqpn from the QP counter id on port
// port of device dev (RDMA_NLDEV_CMD_STAT_DEL; needs CAP_NET_ADMIN). The
// kernel frees a manual-mode counter with its last QP.
func (c *Client) UnbindQP(dev, port, id, lqpn uint32) error {
	op := fmt.Sprintf("unbind QP %d from counter %d on port %d of device %d", lqpn, id, port, dev)
	if port == 0 {
		return invalid(op, "ports are numbered from 1")
	}
	// STAT_DEL answers with a STAT_SET message, a kernel quirk.
	_, err := c.execute(request{op: op, cmd: nlabi.RDMA_NLDEV_CMD_STAT_DEL, attrs: func(ae *netlink.AttributeEncoder) {
		devPortAttrs(dev, port)(ae)
		ae.Uint32(nlabi.RDMA_NLDEV_ATTR_STAT_RES, nlabi.RDMA_NLDEV_ATTR_RES_QP)
		ae.Uint32(nlabi.RDMA_NLDEV_ATTR_STAT_COUNTER_ID, id)
		ae.Uint32(nlabi.RDMA_NLDEV_ATTR_RES_LQPN, lqpn)
	}})
	return c.explainStatEINVAL(op, dev, port, err, false)
}

// decodeQPCounters reads one message of a QP counter dump: DEV_INDEX,
// DEV_NAME and STAT_COUNTER{STAT_COUNTER_ENTRY{...}...}.
func decodeQPCounters(b []byte) ([]QPCounter, error) {
	return decodeStatTable(b, nlabi.RDMA_NLDEV_ATTR_STAT_COUNTER, nlabi.RDMA_NLDEV_ATTR_STAT_COUNTER_ENTRY, "QP counters",
		func(ad *netlink.AttributeDecoder) (QPCounter, bool, error) {
			var qc QPCounter
			ok, err := qc.decodeFields(ad)
			return qc, ok, err
		}, func(qc *QPCounter, dev uint32, name string) { qc.DevIndex, qc.DevName = dev, name })
}

// decodeQPCounter reads a reply that carries one counter's attributes at
// the top level: a counter doit's reply, or STAT_SET's answer to a bind
// (which holds only the device, port, counter id and LQPN).
func decodeQPCounter(b []byte) (QPCounter, error) {
	ad, err := netlink.NewAttributeDecoder(b)
	if err != nil {
		return QPCounter{}, err
	}
	var qc QPCounter
	ok, err := qc.decodeFields(ad)
	if err != nil {
		return QPCounter{}, fmt.Errorf("decode QP counter: %w", err)
	}
	if !ok {
		return QPCounter{}, fmt.Errorf("decode QP counter: reply lacks the counter id: %w", errProto)
	}
	return qc, nil
}

// decodeFields reads a counter's attributes; ok reports whether the
// counter id was among them.
func (qc *QPCounter) decodeFields(ad *netlink.AttributeDecoder) (ok bool, err error) {
	for ad.Next() {
		switch ad.Type() {
		case nlabi.RDMA_NLDEV_ATTR_DEV_INDEX:
			qc.DevIndex = ad.Uint32()
		case nlabi.RDMA_NLDEV_ATTR_DEV_NAME:
			qc.DevName = ad.String()
		case nlabi.RDMA_NLDEV_ATTR_PORT_INDEX:
			qc.Port = ad.Uint32()
		case nlabi.RDMA_NLDEV_ATTR_STAT_COUNTER_ID:
			qc.ID, ok = ad.Uint32(), true
		case nlabi.RDMA_NLDEV_ATTR_STAT_MODE:
			qc.Mode = CounterMode(ad.Uint32())
		case nlabi.RDMA_NLDEV_ATTR_RES_TYPE:
			t := ib.QPType(ad.Uint8())
			qc.QPType = &t
		case nlabi.RDMA_NLDEV_ATTR_RES_PID:
			qc.Owner.PID = ad.Uint32()
		case nlabi.RDMA_NLDEV_ATTR_RES_KERN_NAME:
			qc.Owner.Kernel = ad.String()
		case nlabi.RDMA_NLDEV_ATTR_RES_LQPN:
			// STAT_SET's answer to a bind names the QP at the top level.
			qc.LQPNs = append(qc.LQPNs, ad.Uint32())
		case nlabi.RDMA_NLDEV_ATTR_RES_QP:
			ad.Nested(func(qad *netlink.AttributeDecoder) error {
				for qad.Next() {
					if qad.Type() != nlabi.RDMA_NLDEV_ATTR_RES_QP_ENTRY {
						continue
					}
					var have bool
					qad.Nested(func(ead *netlink.AttributeDecoder) error {
						for ead.Next() {
							if ead.Type() == nlabi.RDMA_NLDEV_ATTR_RES_LQPN {
								qc.LQPNs = append(qc.LQPNs, ead.Uint32())
								have = true
							}
						}
						return ead.Err()
					})
					if qad.Err() == nil && !have {
						return fmt.Errorf("bound QP entry without an LQPN: %w", errProto)
					}
				}
				return qad.Err()
			})
		case nlabi.RDMA_NLDEV_ATTR_STAT_HWCOUNTERS:
			ad.Nested(func(nad *netlink.AttributeDecoder) error {
				var err error
				qc.Counters, err = decodeHWCounters(nad)
				return err
			})
		}
	}
	return ok, ad.Err()
}
