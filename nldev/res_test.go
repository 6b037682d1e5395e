package nldev

import (
	"encoding/binary"
	"errors"
	"net/netip"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/mdlayher/netlink"
	"golang.org/x/sys/unix"

	"github.com/rdmastack/rdmastack/ib"
	"github.com/rdmastack/rdmastack/nldev/internal/nlabi"
)

// encode builds attributes for fake replies.
func encode(t testing.TB, fn func(ae *netlink.AttributeEncoder)) []byte {
	t.Helper()
	ae := netlink.NewAttributeEncoder()
	fn(ae)
	b, err := ae.Encode()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// reqAttrs decodes a request's attributes into type -> payload.
func reqAttrs(t testing.TB, req netlink.Message) map[uint16][]byte {
	t.Helper()
	ad, err := netlink.NewAttributeDecoder(req.Data)
	if err != nil {
		t.Fatal(err)
	}
	m := map[uint16][]byte{}
	for ad.Next() {
		m[ad.Type()] = ad.Bytes()
	}
	return m
}

func u32At(b []byte) uint32 { return binary.NativeEndian.Uint32(b) }

// reqU32 is the u32 attribute typ of reqAttrs' map a, 0 when absent.
func reqU32(a map[uint16][]byte, typ uint16) uint32 {
	if b := a[typ]; len(b) >= 4 {
		return u32At(b)
	}
	return 0
}

func cmdOf(req netlink.Message) uint16 { return nlabi.GetOp(uint16(req.Header.Type)) }

// qpEntry writes the attributes of a user RC QP.
func qpEntry(ae *netlink.AttributeEncoder, lqpn uint32) {
	ae.Uint32(nlabi.RDMA_NLDEV_ATTR_PORT_INDEX, 1)
	ae.Uint32(nlabi.RDMA_NLDEV_ATTR_RES_LQPN, lqpn)
	ae.Uint32(nlabi.RDMA_NLDEV_ATTR_RES_PDN, 3)
	ae.Uint32(nlabi.RDMA_NLDEV_ATTR_RES_PID, 42)
	ae.Uint32(nlabi.RDMA_NLDEV_ATTR_RES_RQPN, 0)
	ae.Uint32(nlabi.RDMA_NLDEV_ATTR_RES_RQ_PSN, 7)
	ae.Uint32(nlabi.RDMA_NLDEV_ATTR_RES_SQ_PSN, 9)
	ae.Uint8(nlabi.RDMA_NLDEV_ATTR_RES_PATH_MIG_STATE, 0)
	ae.Uint8(nlabi.RDMA_NLDEV_ATTR_RES_TYPE, uint8(ib.QPTypeRC))
	ae.Uint8(nlabi.RDMA_NLDEV_ATTR_RES_STATE, uint8(ib.QPStateRTS))
}

// qpTable is one QP dump message of device 2 "mlx0".
func qpTable(t testing.TB, req netlink.Message, lqpns ...uint32) netlink.Message {
	return netlink.Message{Header: netlink.Header{Type: req.Header.Type}, Data: encode(t, func(ae *netlink.AttributeEncoder) {
		ae.Uint32(nlabi.RDMA_NLDEV_ATTR_DEV_INDEX, 2)
		ae.String(nlabi.RDMA_NLDEV_ATTR_DEV_NAME, "mlx0")
		ae.Nested(nlabi.RDMA_NLDEV_ATTR_RES_QP, func(ae *netlink.AttributeEncoder) error {
			for _, n := range lqpns {
				ae.Nested(nlabi.RDMA_NLDEV_ATTR_RES_QP_ENTRY, func(ae *netlink.AttributeEncoder) error {
					qpEntry(ae, n)
					return nil
				})
			}
			return nil
		})
	})}
}

// deviceReply answers GET for device 2 with one port, EINVAL for others.
func deviceReply(t testing.TB, req netlink.Message) ([]netlink.Message, unix.Errno) {
	if u32At(reqAttrs(t, req)[nlabi.RDMA_NLDEV_ATTR_DEV_INDEX]) != 2 {
		return nil, unix.EINVAL
	}
	return []netlink.Message{{Header: netlink.Header{Type: req.Header.Type}, Data: encode(t, func(ae *netlink.AttributeEncoder) {
		ae.Uint32(nlabi.RDMA_NLDEV_ATTR_DEV_INDEX, 2)
		ae.String(nlabi.RDMA_NLDEV_ATTR_DEV_NAME, "mlx0")
		ae.Uint32(nlabi.RDMA_NLDEV_ATTR_PORT_INDEX, 1)
	})}}, 0
}

// TestResDumpMerges: a table that spans several messages comes back as
// one list, each entry with its device.
func TestResDumpMerges(t *testing.T) {
	c := dialFake(t, func(req netlink.Message) ([]netlink.Message, unix.Errno) {
		if cmdOf(req) != nlabi.RDMA_NLDEV_CMD_RES_QP_GET || req.Header.Flags&netlink.Dump == 0 {
			t.Errorf("request %+v", req.Header)
		}
		a := reqAttrs(t, req)
		if _, ok := a[nlabi.RDMA_NLDEV_ATTR_DRIVER_DETAILS]; ok {
			t.Errorf("DRIVER_DETAILS sent without the option")
		}
		if _, ok := a[nlabi.RDMA_NLDEV_ATTR_PORT_INDEX]; ok {
			t.Errorf("PORT_INDEX sent for a whole-device dump")
		}
		return []netlink.Message{qpTable(t, req, 17, 18), qpTable(t, req, 19), qpTable(t, req, 20, 21, 22)}, 0
	})
	qps, err := c.QPs(2)
	if err != nil {
		t.Fatal(err)
	}
	var got []uint32
	for _, q := range qps {
		got = append(got, q.LQPN)
		if q.DevIndex != 2 || q.DevName != "mlx0" || q.Port != 1 || q.Owner != (Owner{PID: 42}) ||
			q.PDN == nil || *q.PDN != 3 || q.RQPSN == nil || *q.RQPSN != 7 || q.SQPSN != 9 ||
			q.PathMigState == nil || *q.PathMigState != ib.MigMigrated || q.Type != ib.QPTypeRC || q.State != ib.QPStateRTS {
			t.Errorf("QP %+v", q)
		}
	}
	if diff := cmp.Diff([]uint32{17, 18, 19, 20, 21, 22}, got); diff != "" {
		t.Errorf("QP numbers (-want +got):\n%s", diff)
	}
}

// TestResDoitKeys checks what each lookup sends: QP and cm_id lookups the
// port (QP0/QP1 in the kernel's per-port key), the others no port.
func TestResDoitKeys(t *testing.T) {
	var last map[uint16][]byte
	var lastCmd uint16
	c := dialFake(t, func(req netlink.Message) ([]netlink.Message, unix.Errno) {
		last, lastCmd = reqAttrs(t, req), cmdOf(req)
		if req.Header.Flags&netlink.Dump != 0 {
			t.Errorf("lookup sent as a dump")
		}
		return nil, unix.ENOENT
	})
	for _, tc := range []struct {
		name    string
		call    func() error
		cmd     uint16
		key     uint16
		id      uint32
		hasPort bool
	}{
		{"QP", func() error { return second(c.QP(2, 1, 17)) }, nlabi.RDMA_NLDEV_CMD_RES_QP_GET, nlabi.RDMA_NLDEV_ATTR_RES_LQPN, 17, true},
		{"GSI QP", func() error { return second(c.QP(2, 2, 1)) }, nlabi.RDMA_NLDEV_CMD_RES_QP_GET, nlabi.RDMA_NLDEV_ATTR_RES_LQPN, 1 | 2<<24, true},
		{"raw QP", func() error { return second(c.RawQP(2, 1, 5)) }, nlabi.RDMA_NLDEV_CMD_RES_QP_GET_RAW, nlabi.RDMA_NLDEV_ATTR_RES_LQPN, 5, true},
		{"cm_id", func() error { return second(c.CMID(2, 1, 4)) }, nlabi.RDMA_NLDEV_CMD_RES_CM_ID_GET, nlabi.RDMA_NLDEV_ATTR_RES_CM_IDN, 4, true},
		{"CQ", func() error { return second(c.CQ(2, 3)) }, nlabi.RDMA_NLDEV_CMD_RES_CQ_GET, nlabi.RDMA_NLDEV_ATTR_RES_CQN, 3, false},
		{"MR", func() error { return second(c.MR(2, 3)) }, nlabi.RDMA_NLDEV_CMD_RES_MR_GET, nlabi.RDMA_NLDEV_ATTR_RES_MRN, 3, false},
		{"PD", func() error { return second(c.PD(2, 3)) }, nlabi.RDMA_NLDEV_CMD_RES_PD_GET, nlabi.RDMA_NLDEV_ATTR_RES_PDN, 3, false},
		{"ctx", func() error { return second(c.Context(2, 3)) }, nlabi.RDMA_NLDEV_CMD_RES_CTX_GET, nlabi.RDMA_NLDEV_ATTR_RES_CTXN, 3, false},
		{"SRQ", func() error { return second(c.SRQ(2, 3)) }, nlabi.RDMA_NLDEV_CMD_RES_SRQ_GET, nlabi.RDMA_NLDEV_ATTR_RES_SRQN, 3, false},
		{"raw SRQ", func() error { return second(c.RawSRQ(2, 3)) }, nlabi.RDMA_NLDEV_CMD_RES_SRQ_GET_RAW, nlabi.RDMA_NLDEV_ATTR_RES_SRQN, 3, false},
	} {
		err := tc.call()
		if !errors.Is(err, os.ErrNotExist) || !errors.Is(err, unix.ENOENT) {
			t.Errorf("%s: %v, want ENOENT and os.ErrNotExist", tc.name, err)
		}
		if lastCmd != tc.cmd || len(last[tc.key]) != 4 || u32At(last[tc.key]) != tc.id ||
			u32At(last[nlabi.RDMA_NLDEV_ATTR_DEV_INDEX]) != 2 {
			t.Errorf("%s: sent command %d with %v", tc.name, lastCmd, last)
		}
		if _, ok := last[nlabi.RDMA_NLDEV_ATTR_PORT_INDEX]; ok != tc.hasPort {
			t.Errorf("%s: PORT_INDEX sent = %v, want %v", tc.name, ok, tc.hasPort)
		}
		if _, ok := last[nlabi.RDMA_NLDEV_ATTR_DRIVER_DETAILS]; ok {
			t.Errorf("%s: DRIVER_DETAILS sent", tc.name)
		}
	}
}

// TestResBadInput: port 0 is refused before anything is sent; the
// kernel's EINVAL for an unknown device or port and its EAGAIN for a QP on
// another port match os.ErrNotExist.
func TestResBadInput(t *testing.T) {
	sent := 0
	c := dialFake(t, func(req netlink.Message) ([]netlink.Message, unix.Errno) {
		sent++
		switch cmdOf(req) {
		case nlabi.RDMA_NLDEV_CMD_GET:
			return deviceReply(t, req)
		case nlabi.RDMA_NLDEV_CMD_RES_QP_GET:
			if req.Header.Flags&netlink.Dump == 0 && u32At(reqAttrs(t, req)[nlabi.RDMA_NLDEV_ATTR_PORT_INDEX]) == 1 {
				return nil, unix.EAGAIN
			}
		}
		return nil, unix.EINVAL
	})
	for name, err := range map[string]error{
		"QP port 0":       second(c.QP(2, 0, 17)),
		"cm_id port 0":    second(c.CMID(2, 0, 1)),
		"raw QP port 0":   second(c.RawQP(2, 0, 1)),
		"QPs of port 0":   second(c.QPsOfPort(2, 0)),
		"cm_ids port 0":   second(c.CMIDsOfPort(2, 0)),
		"raw QPs port 0":  second(c.RawQPsOfPort(2, 0)),
		"unknown options": second(c.QPs(2, ResourceOption(0x80))),
	} {
		var e *Error
		if !errors.Is(err, unix.EINVAL) || !errors.As(err, &e) || errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s: %v, want EINVAL", name, err)
		}
	}
	if sent != 0 {
		t.Errorf("%d requests sent for input refused up front", sent)
	}
	for name, err := range map[string]error{
		"QPs of device 9":    second(c.QPs(9)),
		"CQ of device 9":     second(c.CQ(9, 1)),
		"summary of 9":       second(c.ResourceSummaryOf(9)),
		"QPs of port 2":      second(c.QPsOfPort(2, 2)),
		"QP on another port": second(c.QP(2, 1, 17)),
	} {
		if !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s: %v, want os.ErrNotExist", name, err)
		}
	}
}

// TestResNotSupported: DRIVER_DETAILS and RES_SRQ_GET_RAW on kernels that
// lack them, and raw dumps of drivers without a raw format.
func TestResNotSupported(t *testing.T) {
	srqRaw := false // whether the fake kernel knows RES_SRQ_GET_RAW
	details := false
	c := dialFake(t, func(req netlink.Message) ([]netlink.Message, unix.Errno) {
		a := reqAttrs(t, req)
		switch cmdOf(req) {
		case nlabi.RDMA_NLDEV_CMD_GET:
			return deviceReply(t, req)
		case nlabi.RDMA_NLDEV_CMD_SYS_GET:
			if _, ok := a[nlabi.RDMA_NLDEV_ATTR_DRIVER_DETAILS]; ok && !details {
				return nil, unix.EINVAL // a strict parser that does not know it
			}
			return []netlink.Message{{Header: netlink.Header{Type: req.Header.Type}}}, 0
		case nlabi.RDMA_NLDEV_CMD_RES_QP_GET:
			if v, ok := a[nlabi.RDMA_NLDEV_ATTR_DRIVER_DETAILS]; !ok || v[0] != 1 {
				t.Errorf("QP dump without DRIVER_DETAILS=1: %v", a)
			}
			return nil, 0
		case nlabi.RDMA_NLDEV_CMD_RES_SRQ_GET_RAW:
			if !srqRaw {
				return nil, unix.EINVAL
			}
			if req.Header.Flags&netlink.Dump == 0 {
				return nil, unix.ENOENT
			}
		}
		return nil, unix.EINVAL
	})
	_, err := c.QPs(2, DriverDetails)
	if !errors.Is(err, ErrNotSupported) || !strings.Contains(err.Error(), "6.10") {
		t.Errorf("driver details on a kernel without them: %v", err)
	}
	if has, err := c.HasDriverDetails(); has || err != nil {
		t.Errorf("HasDriverDetails = %v, %v", has, err)
	}
	if _, err := c.ResourceSummary(DriverDetails); !errors.Is(err, ErrNotSupported) {
		t.Errorf("summary with driver details: %v", err)
	}
	details = true
	if _, err := c.QPs(2, DriverDetails); err != nil {
		t.Errorf("driver details on a kernel with them: %v", err)
	}

	_, err = c.RawSRQs(2)
	if !errors.Is(err, ErrNotSupported) || !strings.Contains(err.Error(), "Linux 6.7") {
		t.Errorf("raw SRQs without the command: %v", err)
	}
	srqRaw = true
	_, err = c.RawSRQs(2) // the fake's dump answers EINVAL, as rxe does with objects
	if !errors.Is(err, ErrNotSupported) || !errors.Is(err, unix.EINVAL) || strings.Contains(err.Error(), "6.7") ||
		!strings.Contains(err.Error(), "mlx0 has no raw SRQ format") {
		t.Errorf("raw SRQs of a driver without a raw format: %v", err)
	}
	if _, err := c.RawCQs(2); !errors.Is(err, ErrNotSupported) {
		t.Errorf("raw CQs of a driver without a raw format: %v", err)
	}
	if _, err := c.RawCQs(9); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("raw CQs of no device: %v", err)
	}
}

func TestResourceSummaryRequests(t *testing.T) {
	c := dialFake(t, func(req netlink.Message) ([]netlink.Message, unix.Errno) {
		a := reqAttrs(t, req)
		if _, ok := a[nlabi.RDMA_NLDEV_ATTR_DRIVER_DETAILS]; ok {
			t.Errorf("DRIVER_DETAILS sent")
		}
		dump := req.Header.Flags&netlink.Dump != 0
		if dev, ok := a[nlabi.RDMA_NLDEV_ATTR_DEV_INDEX]; ok == dump || (ok && u32At(dev) != 2) {
			if ok {
				return nil, unix.EINVAL
			}
			t.Errorf("dump=%v with attributes %v", dump, a)
		}
		return []netlink.Message{{Header: netlink.Header{Type: req.Header.Type}, Data: encode(t, func(ae *netlink.AttributeEncoder) {
			ae.Uint32(nlabi.RDMA_NLDEV_ATTR_DEV_INDEX, 2)
			ae.String(nlabi.RDMA_NLDEV_ATTR_DEV_NAME, "mlx0")
			ae.Nested(nlabi.RDMA_NLDEV_ATTR_RES_SUMMARY, func(ae *netlink.AttributeEncoder) error {
				for i, n := range []string{"pd", "cq", "qp"} {
					ae.Nested(nlabi.RDMA_NLDEV_ATTR_RES_SUMMARY_ENTRY, func(ae *netlink.AttributeEncoder) error {
						ae.String(nlabi.RDMA_NLDEV_ATTR_RES_SUMMARY_ENTRY_NAME, n)
						ae.Uint64(nlabi.RDMA_NLDEV_ATTR_RES_SUMMARY_ENTRY_CURR, uint64(i+1))
						return nil
					})
				}
				return nil
			})
		})}}, 0
	})
	want := ResourceSummary{DevIndex: 2, DevName: "mlx0", Counts: []ResourceCount{{ResourcePD, 1}, {ResourceCQ, 2}, {ResourceQP, 3}}}
	all, err := c.ResourceSummary()
	if err != nil || len(all) != 1 {
		t.Fatalf("ResourceSummary: %v, %v", all, err)
	}
	if diff := cmp.Diff(want, all[0]); diff != "" {
		t.Errorf("dump (-want +got):\n%s", diff)
	}
	one, err := c.ResourceSummaryOf(2)
	if diff := cmp.Diff(want, one); err != nil || diff != "" {
		t.Errorf("ResourceSummaryOf: %v (-want +got):\n%s", err, diff)
	}
	if n, ok := one.Count(ResourceQP); !ok || n != 3 {
		t.Errorf("Count(qp) = %d, %v", n, ok)
	}
	if _, ok := one.Count(ResourceSRQ); ok {
		t.Errorf("Count(srq) reported")
	}
	if _, err := c.ResourceSummaryOf(7); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("summary of no device: %v", err)
	}
}

func TestDecodeDriverAttrs(t *testing.T) {
	b := encode(t, func(ae *netlink.AttributeEncoder) {
		ae.Nested(nlabi.RDMA_NLDEV_ATTR_DRIVER, func(ae *netlink.AttributeEncoder) error {
			ae.String(nlabi.RDMA_NLDEV_ATTR_DRIVER_STRING, "name")
			ae.String(nlabi.RDMA_NLDEV_ATTR_DRIVER_STRING, "dct")
			ae.String(nlabi.RDMA_NLDEV_ATTR_DRIVER_STRING, "sqn")
			ae.Uint8(nlabi.RDMA_NLDEV_ATTR_DRIVER_PRINT_TYPE, nlabi.RDMA_NLDEV_PRINT_TYPE_HEX)
			ae.Uint32(nlabi.RDMA_NLDEV_ATTR_DRIVER_U32, 0xabc)
			ae.Uint16(0, 0) // padding
			ae.String(nlabi.RDMA_NLDEV_ATTR_DRIVER_STRING, "delta")
			ae.Int32(nlabi.RDMA_NLDEV_ATTR_DRIVER_S32, -5)
			ae.String(nlabi.RDMA_NLDEV_ATTR_DRIVER_STRING, "big")
			ae.Uint64(nlabi.RDMA_NLDEV_ATTR_DRIVER_U64, 1<<40)
			ae.String(nlabi.RDMA_NLDEV_ATTR_DRIVER_STRING, "neg")
			ae.Int64(nlabi.RDMA_NLDEV_ATTR_DRIVER_S64, -1<<40)
			ae.Uint32(nlabi.RDMA_NLDEV_ATTR_DRIVER_U32, 1) // a value without a key
			ae.String(nlabi.RDMA_NLDEV_ATTR_DRIVER_STRING, "dangling")
			return nil
		})
	})
	ad, err := netlink.NewAttributeDecoder(b)
	if err != nil {
		t.Fatal(err)
	}
	var info ResourceInfo
	for ad.Next() {
		info.decodeAttr(ad)
	}
	if err := ad.Err(); err != nil {
		t.Fatal(err)
	}
	want := []DriverAttr{
		{Key: "name", Value: DriverString("dct")},
		{Key: "sqn", PrintType: DriverPrintHex, Value: DriverU32(0xabc)},
		{Key: "delta", Value: DriverS32(-5)},
		{Key: "big", Value: DriverU64(1 << 40)},
		{Key: "neg", Value: DriverS64(-1 << 40)},
	}
	if diff := cmp.Diff(want, info.Driver); diff != "" {
		t.Errorf("driver attributes (-want +got):\n%s", diff)
	}
	if DriverPrintHex.String() != "hex" || DriverPrintType(9).String() != "DriverPrintType(9)" {
		t.Errorf("print type names")
	}
}

func sockaddr(family uint16, port uint16, addr []byte, scope uint32) []byte {
	b := make([]byte, nlabi.SockaddrStorageSize)
	binary.NativeEndian.PutUint16(b, family)
	binary.BigEndian.PutUint16(b[2:], port)
	if family == nlabi.AF_INET {
		copy(b[4:], addr)
	} else {
		copy(b[8:], addr)
		binary.NativeEndian.PutUint32(b[24:], scope)
	}
	return b
}

func TestDecodeSockaddr(t *testing.T) {
	v6 := netip.MustParseAddr("fe80::1").As16()
	for _, tc := range []struct {
		b      []byte
		family uint16
		want   string
	}{
		{sockaddr(nlabi.AF_INET, 7174, []byte{10, 77, 0, 1}, 0), nlabi.AF_INET, "10.77.0.1:7174"},
		{sockaddr(nlabi.AF_INET6, 4791, v6[:], 3), nlabi.AF_INET6, "[fe80::1%3]:4791"},
		{sockaddr(nlabi.AF_INET6, 1, v6[:], 0), nlabi.AF_INET6, "[fe80::1]:1"},
		{sockaddr(27, 1, nil, 0), 27, "invalid AddrPort"}, // AF_IB
		{[]byte{2}, 0, "invalid AddrPort"},
		{[]byte{2, 0, 0, 1}, nlabi.AF_INET, "invalid AddrPort"},
	} {
		f, ap := decodeSockaddr(tc.b)
		if f != tc.family || ap.String() != tc.want {
			t.Errorf("decodeSockaddr(%x) = %d, %v; want %d, %s", tc.b[:min(len(tc.b), 8)], f, ap, tc.family, tc.want)
		}
	}
}

func TestResEnumNames(t *testing.T) {
	for _, tc := range [][2]string{
		{PortSpaceTCP.String(), "TCP"}, {PortSpaceIB.String(), "IPoIB"}, {PortSpace(9).String(), "---"},
		{CMListen.String(), "LISTEN"}, {CMState(40).String(), "UNKNOWN"},
		{PollWorkqueue.String(), "WORKQUEUE"}, {PollCtx(9).String(), "UNKNOWN"},
		{(Owner{Kernel: "ib_core"}).String(), "[ib_core]"}, {(Owner{PID: 7}).String(), "pid 7"},
		{(Owner{}).String(), "unknown"},
	} {
		if got, want := tc[0], tc[1]; got != want {
			t.Errorf("got %q, want %q", got, want)
		}
	}
}

func second[T any](_ T, err error) error { return err }
