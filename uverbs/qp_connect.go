package uverbs

import (
	"fmt"

	"golang.org/x/sys/unix"

	"github.com/rdmastack/rdmastack/ib"
)

// Peer is what the other end of a connection tells out of band (as the
// pingpong programs, perftest and rdma_cm exchange it): its QP number,
// the first PSN it sends with, and its address: a LID on InfiniBand, a
// GID where a global route is needed (RoCE always needs one).
type Peer struct {
	QPN uint32
	PSN uint32
	LID uint16
	GID ib.GID // the zero GID: no global route (InfiniBand within a subnet)
}

// ConnectOptions are this end's choices for Connect. The zero value of a
// field picks the default libibverbs' example programs use.
type ConnectOptions struct {
	Port      uint8  // default 1
	PKeyIndex uint16 // default 0
	SGIDIndex uint8  // the source GID (Context.FindGID), used when the peer has a GID
	PSN       uint32 // the first PSN this end sends with

	MTU    ib.MTU // default 1024
	Access Access // RC/UC remote access granted at INIT; default none (local only)
	QKey   uint32 // UD; default 0x11111111

	// RC: the ACK timeout (4.096 µs × 2^Timeout; default 14), the
	// transport and RNR retry counts (default 7; an RNR retry count of 7
	// retries for ever), the RNR NAK timer code (default 12), and the
	// RDMA read/atomic depths (default 1 each). As with net.Dialer's
	// KeepAlive, 0 picks the default and a negative value asks for 0
	// (an infinite ACK timeout, no retries, the 655 ms RNR timer).
	Timeout, RetryCnt, RNRRetry, MinRNRTimer int
	MaxRdAtomic, MaxDestRdAtomic             uint8

	SL           uint8
	HopLimit     uint8 // default 1
	TrafficClass uint8
}

// connectValues are ConnectOptions with the defaults applied.
type connectValues struct {
	ConnectOptions
	timeout, retryCnt, rnrRetry, minRNRTimer uint8
}

func (o ConnectOptions) withDefaults() connectValues {
	def := func(v *uint8, d uint8) {
		if *v == 0 {
			*v = d
		}
	}
	pick := func(v int, d uint8) uint8 {
		switch {
		case v == 0:
			return d
		case v < 0:
			return 0
		}
		return uint8(v)
	}
	def(&o.Port, 1)
	def(&o.MaxRdAtomic, 1)
	def(&o.MaxDestRdAtomic, 1)
	def(&o.HopLimit, 1)
	if o.MTU == 0 {
		o.MTU = ib.MTU1024
	}
	if o.QKey == 0 {
		o.QKey = 0x11111111
	}
	return connectValues{ConnectOptions: o, timeout: pick(o.Timeout, 14), retryCnt: pick(o.RetryCnt, 7),
		rnrRetry: pick(o.RNRRetry, 7), minRNRTimer: pick(o.MinRNRTimer, 12)}
}

// check refuses values the attributes cannot hold.
func (o ConnectOptions) check() error {
	switch {
	case o.Timeout > 31:
		return fmt.Errorf("ack timeout %d (at most 31): %w", o.Timeout, unix.EINVAL)
	case o.RetryCnt > 7 || o.RNRRetry > 7:
		return fmt.Errorf("retry counts %d and %d (at most 7): %w", o.RetryCnt, o.RNRRetry, unix.EINVAL)
	case o.MinRNRTimer > 31:
		return fmt.Errorf("rnr timer %d (at most 31): %w", o.MinRNRTimer, unix.EINVAL)
	}
	return nil
}

// Init takes a QP in RESET to INIT with o's port, P_Key index and access
// (RC, UC) or Q_Key (UD).
func (qp *QP) Init(opts ConnectOptions) error {
	o := opts.withDefaults()
	attr := &QPAttr{State: ib.QPStateInit, Port: o.Port, PKeyIndex: o.PKeyIndex}
	mask := QPAttrState | QPAttrPKeyIndex | QPAttrPort
	if qp.typ == ib.QPTypeUD {
		attr.QKey = o.QKey
		mask |= QPAttrQKey
	} else {
		attr.AccessFlags = o.Access
		mask |= QPAttrAccessFlags
	}
	return qp.Modify(attr, mask)
}

// Connect takes a QP in INIT through RTR to RTS (ReadyToReceive, then
// ReadyToSend): for RC and UC connected to peer (its QP number, PSN and
// address), for UD ready to send to any address handle (peer is not
// used). It is what every pingpong, perftest and rdma_cm user writes by
// hand; Init must come first.
func (qp *QP) Connect(o ConnectOptions, peer Peer) error {
	if err := qp.ReadyToReceive(o, peer); err != nil {
		return err
	}
	return qp.ReadyToSend(o)
}

// ReadyToReceive takes a QP in INIT to RTR, for RC and UC with the path
// to peer, its QP number and PSN.
func (qp *QP) ReadyToReceive(opts ConnectOptions, peer Peer) error {
	if err := opts.check(); err != nil {
		return qp.fail("connect", err)
	}
	o := opts.withDefaults()
	attr := &QPAttr{State: ib.QPStateRTR}
	mask := QPAttrState
	if qp.typ != ib.QPTypeUD {
		attr.PathMTU, attr.DestQPN, attr.RQPSN = o.MTU, peer.QPN, peer.PSN&0xffffff
		attr.AH = AHAttr{DLID: peer.LID, SL: o.SL, Port: o.Port}
		if !peer.GID.IsZero() {
			attr.AH.IsGlobal, attr.AH.DGID, attr.AH.SGIDIndex = true, peer.GID, o.SGIDIndex
			attr.AH.HopLimit, attr.AH.TrafficClass = o.HopLimit, o.TrafficClass
		}
		mask |= QPAttrAV | QPAttrPathMTU | QPAttrDestQPN | QPAttrRQPSN
		if qp.typ == ib.QPTypeRC {
			attr.MaxDestRdAtomic, attr.MinRNRTimer = o.MaxDestRdAtomic, o.minRNRTimer
			mask |= QPAttrMaxDestRdAtomic | QPAttrMinRNRTimer
		}
	}
	return qp.Modify(attr, mask)
}

// ReadyToSend takes a QP in RTR to RTS, sending from o.PSN (with o's ACK
// timeout, retry counts and read depth for RC).
func (qp *QP) ReadyToSend(opts ConnectOptions) error {
	if err := opts.check(); err != nil {
		return qp.fail("connect", err)
	}
	o := opts.withDefaults()
	attr := &QPAttr{State: ib.QPStateRTS, SQPSN: o.PSN & 0xffffff}
	mask := QPAttrState | QPAttrSQPSN
	if qp.typ == ib.QPTypeRC {
		attr.Timeout, attr.RetryCnt, attr.RNRRetry, attr.MaxRdAtomic = o.timeout, o.retryCnt, o.rnrRetry, o.MaxRdAtomic
		mask |= QPAttrTimeout | QPAttrRetryCnt | QPAttrRNRRetry | QPAttrMaxQPRdAtomic
	}
	return qp.Modify(attr, mask)
}

// String names the QP for messages: "RC QP 17".
func (qp *QP) String() string { return fmt.Sprintf("%v QP %d", qp.typ, qp.num) }
