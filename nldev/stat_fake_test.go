package nldev

import (
	"testing"

	"github.com/mdlayher/netlink"
	"golang.org/x/sys/unix"

	"github.com/rdmastack/rdmastack/nldev/internal/nlabi"
)

// statKernel is a fake kernel for the statistics commands: device 3 with
// ports 1..ports, counters names (the last two optional), the parse rules
// of Linux 6.1 (strict STAT_GET, STAT_GET_STATUS, STAT_SET and STAT_DEL,
// which refuse attributes above the kernel's maximum) and, with
// opcounter, those of 6.15.
type statKernel struct {
	t         *testing.T
	ports     uint32
	noHW      bool // a driver without hardware counters
	noStatus  bool // a kernel before 5.16: no STAT_GET_STATUS
	opcounter bool // Linux 6.15: knows STAT_OPCOUNTER_ENABLED
	mode      uint32
	mask      uint32
	opcnt     bool
	enabled   map[uint32]bool // optional counter index → enabled
	sent      []netlink.Message
}

var statNames = []string{"rx_pkts", "tx_pkts", "cc_rx_ce_pkts", "cc_rx_cnp_pkts"}

func newStatKernel(t *testing.T) *statKernel {
	return &statKernel{t: t, ports: 2, enabled: map[uint32]bool{2: false, 3: true}}
}

type statReq struct {
	u32     map[uint16]uint32
	u8      map[uint16]uint8
	indexes []uint32 // STAT_HWCOUNTERS{HWCOUNTER_INDEX...}
	nested  bool     // STAT_HWCOUNTERS carried NLA_F_NESTED
	hasHW   bool
	types   []uint16
}

func parseStatReq(t *testing.T, b []byte) statReq {
	r := statReq{u32: map[uint16]uint32{}, u8: map[uint16]uint8{}}
	ad, err := netlink.NewAttributeDecoder(b)
	if err != nil {
		t.Fatal(err)
	}
	for ad.Next() {
		r.types = append(r.types, ad.Type())
		switch ad.Type() {
		case nlabi.RDMA_NLDEV_ATTR_STAT_HWCOUNTERS:
			r.hasHW, r.nested = true, ad.TypeFlags()&netlink.Nested != 0
			ad.Nested(func(nad *netlink.AttributeDecoder) error {
				for nad.Next() {
					r.indexes = append(r.indexes, nad.Uint32())
				}
				return nil
			})
		case nlabi.RDMA_NLDEV_ATTR_STAT_OPCOUNTER_ENABLED:
			r.u8[ad.Type()] = ad.Uint8()
		default:
			r.u32[ad.Type()] = ad.Uint32()
		}
	}
	if err := ad.Err(); err != nil {
		t.Fatalf("request: %v", err)
	}
	return r
}

func (k *statKernel) msg(cmd uint16, fn func(ae *netlink.AttributeEncoder)) netlink.Message {
	ae := netlink.NewAttributeEncoder()
	ae.Uint32(nlabi.RDMA_NLDEV_ATTR_DEV_INDEX, 3)
	ae.String(nlabi.RDMA_NLDEV_ATTR_DEV_NAME, "mlx5_0")
	fn(ae)
	b, err := ae.Encode()
	if err != nil {
		k.t.Fatal(err)
	}
	return netlink.Message{Header: netlink.Header{Type: netlink.HeaderType(nlabi.GetType(nlabi.RDMA_NL_NLDEV, cmd))}, Data: b}
}

func hwTable(ae *netlink.AttributeEncoder, ctrs []Counter) {
	ae.Nested(nlabi.RDMA_NLDEV_ATTR_STAT_HWCOUNTERS, func(tae *netlink.AttributeEncoder) error {
		for _, c := range ctrs {
			tae.Nested(nlabi.RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY, func(eae *netlink.AttributeEncoder) error {
				eae.String(nlabi.RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY_NAME, c.Name)
				eae.Uint64(nlabi.RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY_VALUE, c.Value)
				return nil
			})
		}
		return nil
	})
}

// fakeQPCounters is what the fake kernel's counter dump holds.
var fakeQPCounters = []Counter{{"rx_pkts", 10}, {"tx_pkts", 20}}

func (k *statKernel) counterEntry(ae *netlink.AttributeEncoder, port, id uint32, lqpns ...uint32) {
	ae.Uint32(nlabi.RDMA_NLDEV_ATTR_PORT_INDEX, port)
	ae.Uint32(nlabi.RDMA_NLDEV_ATTR_STAT_COUNTER_ID, id)
	ae.Uint32(nlabi.RDMA_NLDEV_ATTR_STAT_MODE, nlabi.RDMA_COUNTER_MODE_AUTO)
	ae.Uint8(nlabi.RDMA_NLDEV_ATTR_RES_TYPE, 2)
	ae.Uint32(nlabi.RDMA_NLDEV_ATTR_RES_PID, 42)
	ae.Nested(nlabi.RDMA_NLDEV_ATTR_RES_QP, func(qae *netlink.AttributeEncoder) error {
		for _, n := range lqpns {
			qae.Nested(nlabi.RDMA_NLDEV_ATTR_RES_QP_ENTRY, func(eae *netlink.AttributeEncoder) error {
				eae.Uint32(nlabi.RDMA_NLDEV_ATTR_RES_LQPN, n)
				return nil
			})
		}
		return nil
	})
	hwTable(ae, fakeQPCounters)
}

func (k *statKernel) handle(req netlink.Message) ([]netlink.Message, unix.Errno) {
	k.sent = append(k.sent, req)
	cmd := nlabi.GetOp(uint16(req.Header.Type))
	r := parseStatReq(k.t, req.Data)
	dump := req.Header.Flags&netlink.Dump != 0
	switch cmd {
	case nlabi.RDMA_NLDEV_CMD_STAT_GET, nlabi.RDMA_NLDEV_CMD_STAT_GET_STATUS, nlabi.RDMA_NLDEV_CMD_STAT_SET, nlabi.RDMA_NLDEV_CMD_STAT_DEL:
		for _, typ := range r.types {
			// Strict parsing: attributes the kernel does not know are refused.
			if typ > nlabi.RDMA_NLDEV_ATTR_STAT_HWCOUNTER_DYNAMIC && !(k.opcounter && typ == nlabi.RDMA_NLDEV_ATTR_STAT_OPCOUNTER_ENABLED) {
				k.t.Errorf("command %d carries attribute %d, which this kernel refuses", cmd, typ)
				return nil, unix.EINVAL
			}
		}
	}
	dev, port := r.u32[nlabi.RDMA_NLDEV_ATTR_DEV_INDEX], r.u32[nlabi.RDMA_NLDEV_ATTR_PORT_INDEX]
	_, hasPort := r.u32[nlabi.RDMA_NLDEV_ATTR_PORT_INDEX]
	if dev != 3 || (hasPort && (port == 0 || port > k.ports)) {
		return nil, unix.EINVAL
	}
	res, hasRes := r.u32[nlabi.RDMA_NLDEV_ATTR_STAT_RES]
	_, hasMode := r.u32[nlabi.RDMA_NLDEV_ATTR_STAT_MODE]
	switch {
	case cmd == nlabi.RDMA_NLDEV_CMD_PORT_GET:
		return []netlink.Message{k.msg(nlabi.RDMA_NLDEV_CMD_GET, func(ae *netlink.AttributeEncoder) {
			ae.Uint32(nlabi.RDMA_NLDEV_ATTR_PORT_INDEX, port)
		})}, 0
	case cmd == nlabi.RDMA_NLDEV_CMD_STAT_GET && !hasRes:
		if k.noHW || !hasPort {
			return nil, unix.EINVAL
		}
		var ctrs []Counter
		for i, n := range statNames {
			if on, opt := k.enabled[uint32(i)]; opt && !on {
				continue
			}
			ctrs = append(ctrs, Counter{n, uint64(100 * (i + 1))})
		}
		return []netlink.Message{k.msg(cmd, func(ae *netlink.AttributeEncoder) {
			ae.Uint32(nlabi.RDMA_NLDEV_ATTR_PORT_INDEX, port)
			hwTable(ae, ctrs)
		})}, 0
	case cmd == nlabi.RDMA_NLDEV_CMD_STAT_GET && res == nlabi.RDMA_NLDEV_ATTR_RES_QP && dump:
		if port == 2 {
			return nil, 0 // no counters on port 2: only DONE
		}
		return []netlink.Message{k.msg(cmd, func(ae *netlink.AttributeEncoder) {
			ae.Nested(nlabi.RDMA_NLDEV_ATTR_STAT_COUNTER, func(tae *netlink.AttributeEncoder) error {
				tae.Nested(nlabi.RDMA_NLDEV_ATTR_STAT_COUNTER_ENTRY, func(eae *netlink.AttributeEncoder) error {
					k.counterEntry(eae, 1, 5, 17, 18)
					return nil
				})
				return nil
			})
		})}, 0
	case cmd == nlabi.RDMA_NLDEV_CMD_STAT_GET && res == nlabi.RDMA_NLDEV_ATTR_RES_QP:
		if id, ok := r.u32[nlabi.RDMA_NLDEV_ATTR_STAT_COUNTER_ID]; ok {
			if id != 5 || port != 1 {
				return nil, unix.ENOENT
			}
			return []netlink.Message{k.msg(cmd, func(ae *netlink.AttributeEncoder) { k.counterEntry(ae, 1, 5, 17, 18) })}, 0
		}
		if !hasMode || !hasPort {
			return nil, unix.EINVAL
		}
		return []netlink.Message{k.msg(cmd, func(ae *netlink.AttributeEncoder) {
			ae.Uint32(nlabi.RDMA_NLDEV_ATTR_PORT_INDEX, port)
			ae.Uint32(nlabi.RDMA_NLDEV_ATTR_STAT_MODE, k.mode)
			if k.mode == nlabi.RDMA_COUNTER_MODE_AUTO {
				ae.Uint32(nlabi.RDMA_NLDEV_ATTR_STAT_AUTO_MODE_MASK, k.mask)
				if k.opcounter {
					ae.Uint8(nlabi.RDMA_NLDEV_ATTR_STAT_OPCOUNTER_ENABLED, map[bool]uint8{true: 1}[k.opcnt])
				}
			}
		})}, 0
	case cmd == nlabi.RDMA_NLDEV_CMD_STAT_GET && res == nlabi.RDMA_NLDEV_ATTR_RES_MR:
		entry := func(ae *netlink.AttributeEncoder, mrn uint32) {
			ae.Uint32(nlabi.RDMA_NLDEV_ATTR_RES_MRN, mrn)
			if mrn == 2 {
				hwTable(ae, []Counter{{"page_faults", 7}})
			}
		}
		if !dump {
			mrn := r.u32[nlabi.RDMA_NLDEV_ATTR_RES_MRN]
			if hasPort || (mrn != 1 && mrn != 2) {
				return nil, map[bool]unix.Errno{true: unix.EINVAL, false: unix.ENOENT}[hasPort]
			}
			return []netlink.Message{k.msg(cmd, func(ae *netlink.AttributeEncoder) { entry(ae, mrn) })}, 0
		}
		// A large table arrives in several messages.
		var msgs []netlink.Message
		for _, mrn := range []uint32{1, 2} {
			msgs = append(msgs, k.msg(cmd, func(ae *netlink.AttributeEncoder) {
				ae.Nested(nlabi.RDMA_NLDEV_ATTR_RES_MR, func(tae *netlink.AttributeEncoder) error {
					tae.Nested(nlabi.RDMA_NLDEV_ATTR_RES_MR_ENTRY, func(eae *netlink.AttributeEncoder) error { entry(eae, mrn); return nil })
					return nil
				})
			}))
		}
		return msgs, 0
	case cmd == nlabi.RDMA_NLDEV_CMD_STAT_GET_STATUS:
		if k.noStatus || k.noHW || !hasPort {
			return nil, unix.EINVAL
		}
		return []netlink.Message{k.msg(cmd, func(ae *netlink.AttributeEncoder) {
			ae.Uint32(nlabi.RDMA_NLDEV_ATTR_PORT_INDEX, port)
			ae.Nested(nlabi.RDMA_NLDEV_ATTR_STAT_HWCOUNTERS, func(tae *netlink.AttributeEncoder) error {
				for i, n := range statNames {
					tae.Nested(nlabi.RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY, func(eae *netlink.AttributeEncoder) error {
						eae.String(nlabi.RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY_NAME, n)
						eae.Uint32(nlabi.RDMA_NLDEV_ATTR_STAT_HWCOUNTER_INDEX, uint32(i))
						if on, opt := k.enabled[uint32(i)]; opt {
							eae.Uint8(nlabi.RDMA_NLDEV_ATTR_STAT_HWCOUNTER_DYNAMIC, map[bool]uint8{true: 1}[on])
						}
						return nil
					})
				}
				return nil
			})
		})}, 0
	case cmd == nlabi.RDMA_NLDEV_CMD_STAT_SET:
		if !hasPort || (!hasMode && !r.hasHW) {
			return nil, unix.EINVAL
		}
		reply := k.msg(cmd, func(ae *netlink.AttributeEncoder) { ae.Uint32(nlabi.RDMA_NLDEV_ATTR_PORT_INDEX, port) })
		if r.hasHW {
			if !r.nested {
				return nil, unix.EINVAL // strict: NLA_F_NESTED is missing
			}
			for _, i := range r.indexes {
				if _, opt := k.enabled[i]; !opt {
					return nil, unix.EINVAL
				}
			}
			for i := range k.enabled {
				k.enabled[i] = false
			}
			for _, i := range r.indexes {
				k.enabled[i] = true
			}
			return []netlink.Message{reply}, 0
		}
		if res != nlabi.RDMA_NLDEV_ATTR_RES_QP {
			return nil, unix.EINVAL
		}
		switch r.u32[nlabi.RDMA_NLDEV_ATTR_STAT_MODE] {
		case nlabi.RDMA_COUNTER_MODE_AUTO:
			k.mask = r.u32[nlabi.RDMA_NLDEV_ATTR_STAT_AUTO_MODE_MASK]
			k.mode = map[bool]uint32{true: nlabi.RDMA_COUNTER_MODE_AUTO}[k.mask != 0]
			k.opcnt = r.u8[nlabi.RDMA_NLDEV_ATTR_STAT_OPCOUNTER_ENABLED] != 0
			return []netlink.Message{reply}, 0
		default:
			lqpn, ok := r.u32[nlabi.RDMA_NLDEV_ATTR_RES_LQPN]
			if !ok || k.mode == nlabi.RDMA_COUNTER_MODE_AUTO {
				return nil, unix.EINVAL
			}
			id, ok := r.u32[nlabi.RDMA_NLDEV_ATTR_STAT_COUNTER_ID]
			if !ok {
				id = 7
			}
			return []netlink.Message{k.msg(cmd, func(ae *netlink.AttributeEncoder) {
				ae.Uint32(nlabi.RDMA_NLDEV_ATTR_PORT_INDEX, port)
				ae.Uint32(nlabi.RDMA_NLDEV_ATTR_STAT_COUNTER_ID, id)
				ae.Uint32(nlabi.RDMA_NLDEV_ATTR_RES_LQPN, lqpn)
			})}, 0
		}
	case cmd == nlabi.RDMA_NLDEV_CMD_STAT_DEL:
		id, ok1 := r.u32[nlabi.RDMA_NLDEV_ATTR_STAT_COUNTER_ID]
		lqpn, ok2 := r.u32[nlabi.RDMA_NLDEV_ATTR_RES_LQPN]
		if !ok1 || !ok2 || !hasPort || res != nlabi.RDMA_NLDEV_ATTR_RES_QP {
			return nil, unix.EINVAL
		}
		if lqpn != 17 || id != 5 {
			return nil, unix.EINVAL // the QP is not bound to that counter
		}
		// The kernel answers STAT_DEL with a STAT_SET message.
		return []netlink.Message{k.msg(nlabi.RDMA_NLDEV_CMD_STAT_SET, func(ae *netlink.AttributeEncoder) {
			ae.Uint32(nlabi.RDMA_NLDEV_ATTR_PORT_INDEX, port)
			ae.Uint32(nlabi.RDMA_NLDEV_ATTR_STAT_COUNTER_ID, id)
			ae.Uint32(nlabi.RDMA_NLDEV_ATTR_RES_LQPN, lqpn)
		})}, 0
	}
	k.t.Errorf("unexpected request %d: %+v", cmd, r)
	return nil, unix.EINVAL
}
