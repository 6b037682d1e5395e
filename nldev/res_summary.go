package nldev

import (
	"fmt"

	"github.com/mdlayher/netlink"

	"github.com/rdmastack/rdmastack/nldev/internal/nlabi"
)

// ResourceType names a kind of tracked object as RES_GET's summary does.
type ResourceType string

// Resource types, in the kernel's summary order.
const (
	ResourcePD   ResourceType = "pd"
	ResourceCQ   ResourceType = "cq"
	ResourceQP   ResourceType = "qp"
	ResourceCMID ResourceType = "cm_id"
	ResourceMR   ResourceType = "mr"
	ResourceCtx  ResourceType = "ctx"
	ResourceSRQ  ResourceType = "srq"
)

func (t ResourceType) String() string { return string(t) }

// ResourceCount is one line of a device's resource summary.
type ResourceCount struct {
	Type  ResourceType // RDMA_NLDEV_ATTR_RES_SUMMARY_ENTRY_NAME
	Count uint64       // RDMA_NLDEV_ATTR_RES_SUMMARY_ENTRY_CURR
}

// ResourceSummary is how many objects of each type a device tracks
// (RDMA_NLDEV_CMD_RES_GET).
type ResourceSummary struct {
	DevIndex uint32          // RDMA_NLDEV_ATTR_DEV_INDEX
	DevName  string          // RDMA_NLDEV_ATTR_DEV_NAME
	Counts   []ResourceCount // in the kernel's order
}

// Count returns the number of objects of type t, and whether the kernel
// reported that type.
func (s ResourceSummary) Count(t ResourceType) (uint64, bool) {
	for _, c := range s.Counts {
		if c.Type == t {
			return c.Count, true
		}
	}
	return 0, false
}

// ResourceSummary returns the resource summary of every device. With
// DriverDetails the counts include the objects drivers create for
// themselves (Linux 6.10).
func (c *Client) ResourceSummary(opts ...ResourceOption) ([]ResourceSummary, error) {
	op := "dump resource summaries"
	details, err := c.driverDetails(op, opts)
	if err != nil {
		return nil, err
	}
	return dumpAll(c, request{op: op, cmd: nlabi.RDMA_NLDEV_CMD_RES_GET, attrs: detailsAttr(details)}, "", decodeResourceSummary)
}

// ResourceSummaryOf returns the resource summary of the device with index
// dev; an unknown index gives an error matching os.ErrNotExist.
func (c *Client) ResourceSummaryOf(dev uint32, opts ...ResourceOption) (ResourceSummary, error) {
	op := fmt.Sprintf("get resource summary of device %d", dev)
	details, err := c.driverDetails(op, opts)
	if err != nil {
		return ResourceSummary{}, err
	}
	return getOne(c, request{op: op, cmd: nlabi.RDMA_NLDEV_CMD_RES_GET, attrs: func(ae *netlink.AttributeEncoder) {
		ae.Uint32(nlabi.RDMA_NLDEV_ATTR_DEV_INDEX, dev)
		detailsAttr(details)(ae)
	}}, fmt.Sprintf("no device with index %d", dev), decodeResourceSummary)
}

func detailsAttr(details bool) func(*netlink.AttributeEncoder) {
	return func(ae *netlink.AttributeEncoder) {
		if details {
			ae.Uint8(nlabi.RDMA_NLDEV_ATTR_DRIVER_DETAILS, 1)
		}
	}
}

// decodeResourceSummary parses one RES_GET reply.
func decodeResourceSummary(b []byte) (ResourceSummary, error) {
	ad, err := netlink.NewAttributeDecoder(b)
	if err != nil {
		return ResourceSummary{}, err
	}
	var s ResourceSummary
	var haveDev, haveSum bool
	for ad.Next() {
		switch ad.Type() {
		case nlabi.RDMA_NLDEV_ATTR_DEV_INDEX:
			s.DevIndex, haveDev = ad.Uint32(), true
		case nlabi.RDMA_NLDEV_ATTR_DEV_NAME:
			s.DevName = ad.String()
		case nlabi.RDMA_NLDEV_ATTR_RES_SUMMARY:
			haveSum = true
			ad.Nested(func(tad *netlink.AttributeDecoder) error {
				for tad.Next() {
					if tad.Type() != nlabi.RDMA_NLDEV_ATTR_RES_SUMMARY_ENTRY {
						continue
					}
					tad.Nested(func(ead *netlink.AttributeDecoder) error {
						var rc ResourceCount
						var haveName, haveCurr bool
						for ead.Next() {
							switch ead.Type() {
							case nlabi.RDMA_NLDEV_ATTR_RES_SUMMARY_ENTRY_NAME:
								rc.Type, haveName = ResourceType(ead.String()), true
							case nlabi.RDMA_NLDEV_ATTR_RES_SUMMARY_ENTRY_CURR:
								rc.Count, haveCurr = ead.Uint64(), true
							}
						}
						if ead.Err() == nil && (!haveName || !haveCurr) {
							return fmt.Errorf("summary entry lacks its name or count: %w", errProto)
						}
						s.Counts = append(s.Counts, rc)
						return nil
					})
				}
				return nil
			})
		}
	}
	if err := ad.Err(); err != nil {
		return ResourceSummary{}, fmt.Errorf("decode resource summary: %w", err)
	}
	if !haveDev || !haveSum {
		return ResourceSummary{}, fmt.Errorf("decode resource summary: reply lacks the device index or the summary: %w", errProto)
	}
	return s, nil
}
