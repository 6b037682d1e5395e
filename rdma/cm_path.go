package rdma

import (
	"encoding/binary"
	"fmt"
	"strings"

	"github.com/rdmastack/rdmastack/ib"
	"github.com/rdmastack/rdmastack/internal/kabi"
	"github.com/rdmastack/rdmastack/rdma/internal/ucma"
)

// PathFlags say what a path record is for (enum in <rdma/ib_user_sa.h>).
type PathFlags uint32

const (
	PathGMP            PathFlags = ucma.IB_PATH_GMP // usable for general management packets (the CM's)
	PathPrimary        PathFlags = ucma.IB_PATH_PRIMARY
	PathAlternate      PathFlags = ucma.IB_PATH_ALTERNATE
	PathOutbound       PathFlags = ucma.IB_PATH_OUTBOUND
	PathInbound        PathFlags = ucma.IB_PATH_INBOUND
	PathInboundReverse PathFlags = ucma.IB_PATH_INBOUND_REVERSE
	// PathBidirectional is a path usable both ways.
	PathBidirectional = PathOutbound | PathInboundReverse
)

var pathFlagNames = [...]string{"gmp", "primary", "alternate", "outbound", "inbound", "inbound_reverse"}

func (f PathFlags) String() string {
	var s []string
	for i, n := range pathFlagNames {
		if f&(1<<i) != 0 {
			s = append(s, n)
		}
	}
	if rest := f &^ (1<<len(pathFlagNames) - 1); rest != 0 || len(s) == 0 {
		s = append(s, fmt.Sprintf("%#x", uint32(rest)))
	}
	return strings.Join(s, "|")
}

// Path is one route the connection manager resolved for an id: an SA
// PathRecord and what it is used for.
type Path struct {
	Flags  PathFlags
	Record PathRecord
}

// PathRecord is an SA PathRecord (IBA vol. 1, 15.2.5.16), decoded. On
// RoCE the GIDs carry the addressing and the LIDs mean nothing: 6.1 and
// 6.12 pack them from a union that holds the destination MAC for RoCE
// (sa_path_rec), so they come out as a flag byte and MAC bytes. The
// service id is 0 on RoCE.
type PathRecord struct {
	ServiceID      uint64
	DGID, SGID     ib.GID
	DLID, SLID     uint16
	RawTraffic     bool
	FlowLabel      uint32 // 20 bits
	HopLimit       uint8
	TrafficClass   uint8
	Reversible     bool
	NumbPath       uint8 // 7 bits
	PKey           uint16
	QoSClass       uint16 // 12 bits
	SL             uint8  // 4 bits
	MTUSelector    uint8  // 2 bits: 0 greater than, 1 less than, 2 exactly, 3 largest
	MTU            ib.MTU
	RateSelector   uint8
	Rate           uint8 // enum ibv_rate
	LifeSelector   uint8
	PacketLifeTime uint8 // 4.096 µs × 2^n
	Preference     uint8
}

// decodePathRecord decodes the wire format; every byte pattern is a
// record, so it cannot fail.
func decodePathRecord(w *ucma.SAPathRecord) PathRecord {
	be := binary.BigEndian
	fl := be.Uint32(w.FlowLabelHopLimit[:])
	qs := be.Uint16(w.QoSClassSL[:])
	return PathRecord{
		ServiceID:      be.Uint64(w.ServiceID[:]),
		DGID:           ib.GID(w.DGID),
		SGID:           ib.GID(w.SGID),
		DLID:           be.Uint16(w.DLID[:]),
		SLID:           be.Uint16(w.SLID[:]),
		RawTraffic:     fl>>31 != 0,
		FlowLabel:      fl >> 8 & 0xFFFFF,
		HopLimit:       uint8(fl),
		TrafficClass:   w.TClass,
		Reversible:     w.ReversibleNumPath>>7 != 0,
		NumbPath:       w.ReversibleNumPath & 0x7F,
		PKey:           be.Uint16(w.PKey[:]),
		QoSClass:       qs >> 4,
		SL:             uint8(qs & 0xF),
		MTUSelector:    w.MTU >> 6,
		MTU:            ib.MTU(w.MTU & 0x3F),
		RateSelector:   w.Rate >> 6,
		Rate:           w.Rate & 0x3F,
		LifeSelector:   w.PacketLifeTime >> 6,
		PacketLifeTime: w.PacketLifeTime & 0x3F,
		Preference:     w.Preference,
	}
}

// decodeQueryPath decodes a QUERY PATH response. The count is the id's,
// not what was copied: the kernel (ucma_query_path) fills a record only
// while more than one record's size of the buffer remains.
func decodeQueryPath(b []byte) ([]Path, error) {
	var h ucma.QueryPathResp
	hs, rs := len(kabi.Bytes(&h)), len(kabi.Bytes(&ucma.PathRecData{}))
	if len(b) < hs+rs {
		return nil, fmt.Errorf("rdma: query path: a %d-byte response: %w", len(b), errInvalid)
	}
	h = kabi.Decode[ucma.QueryPathResp](b)
	n := min(int(min(h.NumPaths, 1<<16)), (len(b)-hs-1)/rs)
	paths := make([]Path, n)
	for i := range paths {
		d := kabi.Decode[ucma.PathRecData](b[hs+i*rs:])
		paths[i] = Path{Flags: PathFlags(d.Flags), Record: decodePathRecord(&d.PathRec)}
	}
	return paths, nil
}

// QueryPaths returns the paths the connection manager holds for the id
// (rdma_query_route's path records, through QUERY PATH): empty before its
// route is resolved, one bidirectional primary path after on RoCE.
func (id *ID) QueryPaths() ([]Path, error) {
	const op = "query path"
	req := ucma.Query{ID: id.handle, Option: ucma.RDMA_USER_CM_QUERY_PATH}
	resp := make([]byte, len(kabi.Bytes(&ucma.QueryPathResp{}))+(ucma.QueryPathMax+1)*len(kabi.Bytes(&ucma.PathRecData{})))
	if err := id.write(op, ucma.RDMA_USER_CM_CMD_QUERY, kabi.Bytes(&req), 0, resp); err != nil {
		return nil, err
	}
	return decodeQueryPath(resp)
}
