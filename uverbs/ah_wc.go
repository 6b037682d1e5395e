package uverbs

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net/netip"

	"golang.org/x/sys/unix"

	"github.com/rdmastack/rdmastack/ib"
)

// GRHLen is the size of the Global Routing Header a UD receive buffer
// holds before the datagram (struct ibv_grh). On RoCE v2 over IPv4 its
// first 20 bytes are zero and the last 20 are the packet's IPv4 header.
const GRHLen = 40

// ErrBadGRH is matched by the error AHAttrFromWC returns for a header it
// cannot read (neither an IPv6 GRH nor an IPv4 header, a multicast
// destination, a next header other than UDP or IB's).
var ErrBadGRH = errors.New("unusable global routing header")

// grhInfo is what a received GRH says about a datagram, from the
// receiver's point of view: where it came from (the reply's DGID), which
// local GID it went to, and of which type.
type grhInfo struct {
	src, dst     ib.GID
	types        []ib.GIDType // the local GID's type: v2 for UDP, IB or v1 for IB's next header
	flowLabel    uint32
	hopLimit     uint8
	trafficClass uint8
}

// nextHdrIB is the next header of a RoCE v1 (or IB) GRH: the BTH.
const nextHdrIB = 0x1b

// ipVersion tells an IPv6 GRH from the IPv4 header RoCE v2 puts in the
// last 20 bytes, as libibverbs' get_grh_header_version does: a GRH whose
// version is not 6 is IPv4 if the header there says 4; one whose version
// is 6 is still IPv4 if the bytes there form a 20-byte IPv4 header with a
// correct checksum.
func ipVersion(grh []byte) int {
	ip4 := grh[20:40]
	if grh[0]>>4 != 6 {
		if ip4[0]>>4 == 4 {
			return 4
		}
		return 0
	}
	if ip4[0]&0xf != 5 {
		return 6
	}
	if ipv4Checksum(ip4) == binary.BigEndian.Uint16(ip4[10:12]) {
		return 4
	}
	return 6
}

// ipv4Checksum is the internet checksum of a 20-byte IPv4 header taken
// with its checksum field as zero.
func ipv4Checksum(h []byte) uint16 {
	var sum uint32
	for i := 0; i < 20; i += 2 {
		if i == 10 {
			continue
		}
		sum += uint32(binary.BigEndian.Uint16(h[i:]))
	}
	for sum>>16 != 0 {
		sum = sum&0xffff + sum>>16
	}
	return ^uint16(sum)
}

// parseGRH reads the 40 bytes before a UD datagram.
func parseGRH(grh []byte) (grhInfo, error) {
	if len(grh) < GRHLen {
		return grhInfo{}, fmt.Errorf("%d bytes, want %d: %w", len(grh), GRHLen, ErrBadGRH)
	}
	vtf := binary.BigEndian.Uint32(grh[0:4])
	g := grhInfo{flowLabel: vtf & 0xfffff}
	switch ipVersion(grh) {
	case 4:
		ip4 := grh[20:40]
		dst := netip.AddrFrom4([4]byte(ip4[16:20]))
		if dst.IsMulticast() {
			return grhInfo{}, fmt.Errorf("multicast destination %v: %w", dst, ErrBadGRH)
		}
		g.src = ib.GID(netip.AddrFrom4([4]byte(ip4[12:16])).As16())
		g.dst = ib.GID(dst.As16())
		g.types = []ib.GIDType{ib.GIDTypeRoCEv2}
		g.hopLimit, g.trafficClass = ip4[8], ip4[1]
	case 6:
		copy(g.src[:], grh[8:24])
		copy(g.dst[:], grh[24:40])
		if g.dst[0] == 0xff {
			return grhInfo{}, fmt.Errorf("multicast destination %v: %w", g.dst, ErrBadGRH)
		}
		switch grh[6] {
		case unix.IPPROTO_UDP:
			g.types = []ib.GIDType{ib.GIDTypeRoCEv2}
		case nextHdrIB:
			// sysfs calls both "IB/RoCE v1".
			g.types = []ib.GIDType{ib.GIDTypeIB, ib.GIDTypeRoCEv1}
		default:
			return grhInfo{}, fmt.Errorf("next header %d: %w", grh[6], ErrBadGRH)
		}
		g.hopLimit, g.trafficClass = grh[7], uint8(vtf>>20)
	default:
		return grhInfo{}, fmt.Errorf("IP version %d: %w", grh[0]>>4, ErrBadGRH)
	}
	return g, nil
}

// gidIndexFunc finds the index of a GID of one of typs in port's table.
type gidIndexFunc func(port uint8, gid ib.GID, typs []ib.GIDType) (uint8, error)

// ahAttrFromWC builds the reply address as ibv_init_ah_from_wc does.
func ahAttrFromWC(port uint8, wc *WC, grh []byte, find gidIndexFunc) (AHAttr, error) {
	a := AHAttr{DLID: wc.SLID, SL: wc.SL, SrcPathBits: wc.DLIDPath, Port: port}
	if len(grh) >= 4 {
		a.FlowLabel = binary.BigEndian.Uint32(grh) & 0xfffff
	}
	if wc.Flags&WCWithGRH == 0 {
		return a, nil
	}
	g, err := parseGRH(grh)
	if err != nil {
		return AHAttr{}, err
	}
	idx, err := find(port, g.dst, g.types)
	if err != nil {
		return AHAttr{}, err
	}
	a.IsGlobal, a.DGID, a.SGIDIndex = true, g.src, idx
	a.HopLimit, a.TrafficClass = g.hopLimit, g.trafficClass
	return a, nil
}

// AHAttrFromWC is the address vector of a reply to the datagram a UD
// receive completion reports (ibv_init_ah_from_wc): grh is the first
// GRHLen bytes of the receive buffer, port the QP's port. With a GRH
// (WCWithGRH) the reply goes to the datagram's source GID from the local
// GID it came to (its index in port's table), with the datagram's hop
// limit and traffic class; RoCE v2 over IPv4 reads them from the IPv4
// header. A GRH it cannot read gives an error matching ErrBadGRH; a
// destination GID not in the table one matching os.ErrNotExist.
func (c *Context) AHAttrFromWC(port uint8, wc *WC, grh []byte) (AHAttr, error) {
	const op = "ah attr from wc"
	a, err := ahAttrFromWC(port, wc, grh, c.gidIndex)
	if err != nil {
		var e *Error
		if errors.As(err, &e) {
			return AHAttr{}, err
		}
		return AHAttr{}, wrap(c.dev.Name, op, err)
	}
	return a, nil
}

// gidIndex looks gid up in port's GID table.
func (c *Context) gidIndex(port uint8, gid ib.GID, typs []ib.GIDType) (uint8, error) {
	table, err := c.QueryGIDTable()
	if err != nil {
		return 0, err
	}
	for _, e := range table {
		if e.Port != uint32(port) || e.GID != gid {
			continue
		}
		for _, t := range typs {
			if e.Type == t {
				return uint8(e.Index), nil
			}
		}
	}
	return 0, wrap(c.dev.Name, fmt.Sprintf("find gid %v (%v) on port %d", gid, typs[0], port), unix.ENOENT)
}

// CreateAHFromWC creates the address handle of a reply to the datagram
// wc reports (ibv_create_ah_from_wc); see AHAttrFromWC.
func (pd *PD) CreateAHFromWC(port uint8, wc *WC, grh []byte) (*AH, error) {
	attr, err := pd.ctx.AHAttrFromWC(port, wc, grh)
	if err != nil {
		return nil, err
	}
	return pd.CreateAH(attr)
}
