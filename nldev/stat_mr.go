package nldev

import (
	"fmt"

	"github.com/mdlayher/netlink"

	"github.com/rdmastack/rdmastack/nldev/internal/nlabi"
)

// MRStats is the statistics entry of one memory region
// (RDMA_NLDEV_CMD_STAT_GET with RDMA_NLDEV_ATTR_STAT_RES = RES_MR).
type MRStats struct {
	DevIndex uint32 // RDMA_NLDEV_ATTR_DEV_INDEX
	DevName  string // RDMA_NLDEV_ATTR_DEV_NAME
	MRN      uint32 // RDMA_NLDEV_ATTR_RES_MRN

	// Counters are the driver's per-MR counters
	// (RDMA_NLDEV_ATTR_STAT_HWCOUNTERS); nil when the driver has none, as
	// for rxe, which reports only the MR number.
	Counters []Counter
}

// MRStats returns the statistics of every memory region of the device
// with index dev.
func (c *Client) MRStats(dev uint32) ([]MRStats, error) {
	op := fmt.Sprintf("dump MR statistics of device %d", dev)
	// STAT_GET is strict-parsed before Linux 6.12: no DRIVER_DETAILS here
	// (iproute2 from 6.10 sends it and fails on those kernels).
	msgs, err := c.execute(request{op: op, cmd: nlabi.RDMA_NLDEV_CMD_STAT_GET, dump: true, attrs: func(ae *netlink.AttributeEncoder) {
		ae.Uint32(nlabi.RDMA_NLDEV_ATTR_DEV_INDEX, dev)
		ae.Uint32(nlabi.RDMA_NLDEV_ATTR_STAT_RES, nlabi.RDMA_NLDEV_ATTR_RES_MR)
	}})
	if err != nil {
		return nil, mapNotFound(op, fmt.Sprintf("no device with index %d", dev), err)
	}
	out := []MRStats{}
	for _, b := range msgs {
		ms, err := decodeMRStatsTable(b)
		if err != nil {
			return nil, wrap(op, err)
		}
		out = append(out, ms...)
	}
	return out, nil
}

// MRStat returns the statistics of the memory region with number mrn of
// device dev. An MR the kernel does not have gives an error matching
// os.ErrNotExist.
func (c *Client) MRStat(dev, mrn uint32) (MRStats, error) {
	op := fmt.Sprintf("get statistics of MR %d of device %d", mrn, dev)
	msgs, err := c.execute(request{op: op, cmd: nlabi.RDMA_NLDEV_CMD_STAT_GET, attrs: func(ae *netlink.AttributeEncoder) {
		ae.Uint32(nlabi.RDMA_NLDEV_ATTR_DEV_INDEX, dev)
		ae.Uint32(nlabi.RDMA_NLDEV_ATTR_RES_MRN, mrn)
		ae.Uint32(nlabi.RDMA_NLDEV_ATTR_STAT_RES, nlabi.RDMA_NLDEV_ATTR_RES_MR)
	}})
	if err != nil {
		return MRStats{}, c.explainEINVAL(op, dev, err)
	}
	if len(msgs) != 1 {
		return MRStats{}, &Error{Op: op, Err: fmt.Errorf("kernel sent %d replies, want 1: %w", len(msgs), errProto)}
	}
	ad, err := netlink.NewAttributeDecoder(msgs[0])
	if err != nil {
		return MRStats{}, wrap(op, err)
	}
	ms, ok, err := decodeMRStatsFields(ad)
	if err == nil && !ok {
		err = fmt.Errorf("reply lacks the MR number: %w", errProto)
	}
	if err != nil {
		return MRStats{}, wrap(op, fmt.Errorf("decode MR statistics: %w", err))
	}
	return ms, nil
}

// decodeMRStatsTable reads one message of an MR statistics dump: DEV_INDEX,
// DEV_NAME and RES_MR{RES_MR_ENTRY{MRN, [STAT_HWCOUNTERS]}...}.
func decodeMRStatsTable(b []byte) ([]MRStats, error) {
	return decodeStatTable(b, nlabi.RDMA_NLDEV_ATTR_RES_MR, nlabi.RDMA_NLDEV_ATTR_RES_MR_ENTRY, "MR statistics",
		decodeMRStatsFields, func(ms *MRStats, dev uint32, name string) { ms.DevIndex, ms.DevName = dev, name })
}

func decodeMRStatsFields(ad *netlink.AttributeDecoder) (ms MRStats, ok bool, err error) {
	for ad.Next() {
		switch ad.Type() {
		case nlabi.RDMA_NLDEV_ATTR_DEV_INDEX:
			ms.DevIndex = ad.Uint32()
		case nlabi.RDMA_NLDEV_ATTR_DEV_NAME:
			ms.DevName = ad.String()
		case nlabi.RDMA_NLDEV_ATTR_RES_MRN:
			ms.MRN, ok = ad.Uint32(), true
		case nlabi.RDMA_NLDEV_ATTR_STAT_HWCOUNTERS:
			ad.Nested(func(nad *netlink.AttributeDecoder) error {
				var err error
				ms.Counters, err = decodeHWCounters(nad)
				return err
			})
		}
	}
	return ms, ok, ad.Err()
}
