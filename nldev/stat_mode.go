package nldev

import (
	"fmt"
	"strings"

	"github.com/mdlayher/netlink"

	"github.com/rdmastack/rdmastack/nldev/internal/nlabi"
)

// CounterMode is how a port binds QPs to QP counters
// (RDMA_NLDEV_ATTR_STAT_MODE, enum rdma_nl_counter_mode).
type CounterMode uint32

// Counter modes.
const (
	CounterModeNone   CounterMode = nlabi.RDMA_COUNTER_MODE_NONE   // no automatic binding
	CounterModeAuto   CounterMode = nlabi.RDMA_COUNTER_MODE_AUTO   // new QPs are bound by the auto-mode criteria
	CounterModeManual CounterMode = nlabi.RDMA_COUNTER_MODE_MANUAL // QPs are bound by BindQP
)

func (m CounterMode) String() string {
	switch m {
	case CounterModeNone:
		return "none"
	case CounterModeAuto:
		return "auto"
	case CounterModeManual:
		return "manual"
	}
	return fmt.Sprintf("CounterMode(%d)", uint32(m))
}

// AutoModeMask is the set of criteria by which auto mode groups QPs onto
// counters (RDMA_NLDEV_ATTR_STAT_AUTO_MODE_MASK, enum rdma_nl_counter_mask).
// 0 turns auto mode off.
type AutoModeMask uint32

// Auto mode criteria.
const (
	AutoModeQPType AutoModeMask = nlabi.RDMA_COUNTER_MASK_QP_TYPE // one counter per QP type
	AutoModePID    AutoModeMask = nlabi.RDMA_COUNTER_MASK_PID     // one counter per process (Linux 5.9)

	autoModeKnown = AutoModeQPType | AutoModePID
)

// String lists the criteria as iproute2 names them, comma-separated
// ("type,pid"); unknown bits print as hex.
func (m AutoModeMask) String() string {
	var names []string
	if m&AutoModeQPType != 0 {
		names = append(names, "type")
	}
	if m&AutoModePID != 0 {
		names = append(names, "pid")
	}
	if rest := m &^ autoModeKnown; rest != 0 {
		names = append(names, fmt.Sprintf("%#x", uint32(rest)))
	}
	if len(names) == 0 {
		return "off"
	}
	return strings.Join(names, ",")
}

// QPCounterMode is a port's QP counter setting (RDMA_NLDEV_CMD_STAT_GET
// with RDMA_NLDEV_ATTR_STAT_RES = RES_QP and RDMA_NLDEV_ATTR_STAT_MODE).
type QPCounterMode struct {
	Mode CounterMode
	Mask AutoModeMask // the auto-mode criteria; 0 unless Mode is CounterModeAuto

	// OptionalCounters tells whether auto mode also enables the optional
	// counters on the counters it allocates
	// (RDMA_NLDEV_ATTR_STAT_OPCOUNTER_ENABLED, Linux 6.15); nil when the
	// kernel does not report it (older kernels, or not in auto mode).
	OptionalCounters *bool
}

// QPCounterMode returns the QP counter mode of port port (from 1) of the
// device with index dev.
func (c *Client) QPCounterMode(dev, port uint32) (QPCounterMode, error) {
	op := fmt.Sprintf("get QP counter mode of port %d of device %d", port, dev)
	if port == 0 {
		return QPCounterMode{}, invalid(op, "ports are numbered from 1")
	}
	return c.qpCounterMode(op, dev, port)
}

func (c *Client) qpCounterMode(op string, dev, port uint32) (QPCounterMode, error) {
	msgs, err := c.execute(request{op: op, cmd: nlabi.RDMA_NLDEV_CMD_STAT_GET, attrs: func(ae *netlink.AttributeEncoder) {
		devPortAttrs(dev, port)(ae)
		ae.Uint32(nlabi.RDMA_NLDEV_ATTR_STAT_RES, nlabi.RDMA_NLDEV_ATTR_RES_QP)
		// Any mode value asks for the mode instead of the counters.
		ae.Uint32(nlabi.RDMA_NLDEV_ATTR_STAT_MODE, nlabi.RDMA_COUNTER_MODE_MANUAL)
	}})
	if err != nil {
		return QPCounterMode{}, c.explainStatEINVAL(op, dev, port, err, false)
	}
	if len(msgs) != 1 {
		return QPCounterMode{}, &Error{Op: op, Err: fmt.Errorf("kernel sent %d replies, want 1: %w", len(msgs), errProto)}
	}
	m, err := decodeQPCounterMode(msgs[0])
	if err != nil {
		return QPCounterMode{}, wrap(op, err)
	}
	return m, nil
}

func decodeQPCounterMode(b []byte) (QPCounterMode, error) {
	ad, err := netlink.NewAttributeDecoder(b)
	if err != nil {
		return QPCounterMode{}, err
	}
	var m QPCounterMode
	var haveMode bool
	for ad.Next() {
		switch ad.Type() {
		case nlabi.RDMA_NLDEV_ATTR_STAT_MODE:
			m.Mode, haveMode = CounterMode(ad.Uint32()), true
		case nlabi.RDMA_NLDEV_ATTR_STAT_AUTO_MODE_MASK:
			m.Mask = AutoModeMask(ad.Uint32())
		case nlabi.RDMA_NLDEV_ATTR_STAT_OPCOUNTER_ENABLED:
			on := ad.Uint8() != 0
			m.OptionalCounters = &on
		}
	}
	if err := ad.Err(); err != nil {
		return QPCounterMode{}, fmt.Errorf("decode QP counter mode: %w", err)
	}
	if !haveMode {
		return QPCounterMode{}, fmt.Errorf("decode QP counter mode: reply lacks the mode: %w", errProto)
	}
	return m, nil
}

// SetQPCounterAuto puts port port of device dev in auto mode with the
// given criteria, or turns auto mode off with mask 0 (RDMA_NLDEV_CMD_STAT_SET;
// needs CAP_NET_ADMIN). Unknown mask bits are rejected before anything is
// sent.
func (c *Client) SetQPCounterAuto(dev, port uint32, mask AutoModeMask) error {
	op := fmt.Sprintf("set QP counter auto mode %s on port %d of device %d", mask, port, dev)
	if err := checkAutoMask(op, port, mask); err != nil {
		return err
	}
	return c.setAutoMode(op, dev, port, mask, nil)
}

// SetQPCounterAutoOptional is SetQPCounterAuto that also says whether the
// counters auto mode allocates count the optional counters too
// (RDMA_NLDEV_ATTR_STAT_OPCOUNTER_ENABLED). That attribute came with Linux
// 6.15 and older kernels refuse it, so it is sent only once the kernel has
// shown that it knows it; otherwise the error matches ErrNotSupported and
// the port's mode is as before. A kernel reports the setting only in auto
// mode, so from another mode this first switches the port to auto mode
// without it, looks, and switches back if the kernel lacks it.
func (c *Client) SetQPCounterAutoOptional(dev, port uint32, mask AutoModeMask, optional bool) error {
	op := fmt.Sprintf("set QP counter auto mode %s optional-counters %s on port %d of device %d", mask, onOff(optional), port, dev)
	if err := checkAutoMask(op, port, mask); err != nil {
		return err
	}
	if mask == 0 {
		return invalid(op, "optional counters need auto mode criteria")
	}
	old, err := c.qpCounterMode(op, dev, port)
	if err != nil {
		return err
	}
	known := old.OptionalCounters != nil
	if !known && old.Mode != CounterModeAuto {
		// A kernel reports the setting only in auto mode: switch to auto
		// mode without it and look.
		if err := c.setAutoMode(op, dev, port, mask, nil); err != nil {
			return err
		}
		now, err := c.qpCounterMode(op, dev, port)
		if err != nil {
			return err
		}
		known = now.OptionalCounters != nil
		if !known {
			if err := c.setAutoMode(op, dev, port, 0, nil); err != nil {
				return err
			}
		}
	}
	if !known {
		return &Error{Op: op, Err: fmt.Errorf("optional counters in auto mode need Linux 6.15: %w", ErrNotSupported)}
	}
	return c.setAutoMode(op, dev, port, mask, &optional)
}

func checkAutoMask(op string, port uint32, mask AutoModeMask) error {
	if port == 0 {
		return invalid(op, "ports are numbered from 1")
	}
	if mask&^autoModeKnown != 0 {
		return invalid(op, fmt.Sprintf("unknown auto mode criteria %#x", uint32(mask&^autoModeKnown)))
	}
	return nil
}

func (c *Client) setAutoMode(op string, dev, port uint32, mask AutoModeMask, optional *bool) error {
	_, err := c.execute(request{op: op, cmd: nlabi.RDMA_NLDEV_CMD_STAT_SET, attrs: func(ae *netlink.AttributeEncoder) {
		devPortAttrs(dev, port)(ae)
		ae.Uint32(nlabi.RDMA_NLDEV_ATTR_STAT_RES, nlabi.RDMA_NLDEV_ATTR_RES_QP)
		ae.Uint32(nlabi.RDMA_NLDEV_ATTR_STAT_MODE, nlabi.RDMA_COUNTER_MODE_AUTO)
		ae.Uint32(nlabi.RDMA_NLDEV_ATTR_STAT_AUTO_MODE_MASK, uint32(mask))
		if optional != nil {
			var v uint8
			if *optional {
				v = 1
			}
			ae.Uint8(nlabi.RDMA_NLDEV_ATTR_STAT_OPCOUNTER_ENABLED, v)
		}
	}})
	return c.explainStatEINVAL(op, dev, port, err, false)
}
