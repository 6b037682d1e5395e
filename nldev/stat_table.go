package nldev

import (
	"fmt"

	"github.com/mdlayher/netlink"

	"github.com/rdmastack/rdmastack/nldev/internal/nlabi"
)

// decodeStatTable reads one message of a statistics dump that lists entries
// of one device: DEV_INDEX, DEV_NAME and table{entry{...}...}. fields
// decodes an entry and reports whether it carried its key; setDev gives
// each entry the message's device. what names the table in errors.
func decodeStatTable[T any](b []byte, table, entry uint16, what string,
	fields func(*netlink.AttributeDecoder) (T, bool, error), setDev func(*T, uint32, string)) ([]T, error) {
	ad, err := netlink.NewAttributeDecoder(b)
	if err != nil {
		return nil, err
	}
	var (
		devIndex uint32
		devName  string
		haveDev  bool
		out      []T
	)
	for ad.Next() {
		switch ad.Type() {
		case nlabi.RDMA_NLDEV_ATTR_DEV_INDEX:
			devIndex, haveDev = ad.Uint32(), true
		case nlabi.RDMA_NLDEV_ATTR_DEV_NAME:
			devName = ad.String()
		case table:
			ad.Nested(func(tad *netlink.AttributeDecoder) error {
				for tad.Next() {
					if tad.Type() != entry {
						continue
					}
					var v T
					var ok bool
					tad.Nested(func(ead *netlink.AttributeDecoder) error {
						var err error
						v, ok, err = fields(ead)
						return err
					})
					if tad.Err() != nil {
						break
					}
					if !ok {
						return fmt.Errorf("%s entry without its key: %w", what, errProto)
					}
					out = append(out, v)
				}
				return tad.Err()
			})
		}
	}
	if err := ad.Err(); err != nil {
		return nil, fmt.Errorf("decode %s: %w", what, err)
	}
	if !haveDev {
		return nil, fmt.Errorf("decode %s: reply lacks the device index: %w", what, errProto)
	}
	for i := range out {
		setDev(&out[i], devIndex, devName)
	}
	return out, nil
}
