package uverbs

import (
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/rdmastack/rdmastack/ib"
	"github.com/rdmastack/rdmastack/uverbs/internal/abi"
)

// QPCap is a QP's queue sizes (struct ib_uverbs_qp_cap).
type QPCap struct {
	MaxSendWR     uint32
	MaxRecvWR     uint32
	MaxSendSGE    uint32
	MaxRecvSGE    uint32
	MaxInlineData uint32
}

// QPInit is what CreateQP needs.
type QPInit struct {
	Type     ib.QPType // QPTypeRC, QPTypeUC or QPTypeUD
	SendCQ   *CQ
	RecvCQ   *CQ
	SRQ      *SRQ // nil for none
	Cap      QPCap
	SQSigAll bool // every send work request generates a completion
}

// QP is a queue pair.
type QP struct {
	object
	userHandle uint64
	num        uint32
	typ        ib.QPType
	cap        QPCap
	sendCQ     *CQ
	recvCQ     *CQ
	srq        *SRQ
	sigAll     bool        // every send is signaled (QPInit.SQSigAll)
	ops        qpOps       // the provider's; nil on a context without a char device
	draining   atomic.Bool // a Drain is in progress
}

// CreateQP creates a queue pair in pd. It may run concurrently with the
// Close of the PD, CQs or SRQ it names, and of the context: either the
// QP is made (a Close of what it names waits for the creation and then
// fails with EBUSY while the QP lives), or it is not and the error
// matches os.ErrClosed.
func (pd *PD) CreateQP(init QPInit) (*QP, error) {
	c := pd.ctx
	const op = "create qp"
	switch init.Type {
	case ib.QPTypeRC, ib.QPTypeUC, ib.QPTypeUD:
	default:
		return nil, invalid(c.dev.Name, op, "qp type %v is not RC, UC or UD", init.Type)
	}
	if init.SendCQ == nil || init.RecvCQ == nil {
		return nil, invalid(c.dev.Name, op, "send and receive CQs are required")
	}
	if init.Type != ib.QPTypeRC && c.prov.traits().iwarp {
		return nil, c.unsupported(op, init.Type.String()+" QPs")
	}
	dp, err := c.dataPath(op, "QP")
	if err != nil {
		return nil, err
	}
	// The PD, the CQs and the SRQ stay open until the kernel has the QP
	// (see object).
	var srqObj *object
	if init.SRQ != nil {
		srqObj = &init.SRQ.object
	}
	done, err := useAll(op, &pd.object, &init.SendCQ.object, &init.RecvCQ.object, srqObj)
	if err != nil {
		return nil, err
	}
	defer done()
	qp := &QP{object: object{ctx: c, kind: "qp"}, typ: init.Type, sendCQ: init.SendCQ, recvCQ: init.RecvCQ, srq: init.SRQ,
		userHandle: c.newHandle()}
	req := abi.CreateQp{UserHandle: qp.userHandle, PdHandle: pd.handle, SendCqHandle: init.SendCQ.handle,
		RecvCqHandle: init.RecvCQ.handle, MaxSendWr: init.Cap.MaxSendWR, MaxRecvWr: init.Cap.MaxRecvWR,
		MaxSendSge: init.Cap.MaxSendSGE, MaxRecvSge: init.Cap.MaxRecvSGE, MaxInlineData: init.Cap.MaxInlineData,
		SqSigAll: b2u(init.SQSigAll), QpType: uint8(init.Type)}
	if init.SRQ != nil {
		req.SrqHandle, req.IsSrq = init.SRQ.handle, 1
	}
	var resp abi.CreateQpResp
	d, err := c.prov.prepareQP(&init)
	if err != nil {
		return nil, wrap(c.dev.Name, op, err)
	}
	if err := c.write(op, abi.CmdCreateQp.Build(&req, &resp, d.in, d.out)); err != nil {
		d.failed()
		return nil, err
	}
	qp.handle, qp.num, qp.id = resp.QpHandle, resp.Qpn, resp.Qpn
	qp.cap = QPCap{resp.MaxSendWr, resp.MaxRecvWr, resp.MaxSendSge, resp.MaxRecvSge, resp.MaxInlineData}
	qp.sigAll = init.SQSigAll
	if dp {
		if qp.ops, err = c.prov.newQP(qp, d); err != nil {
			err = qp.fail("map", err)
			return nil, errors.Join(err, qp.Close())
		}
	}
	if err := c.adopt(op, qp.userHandle, qp); err != nil {
		// The QP died with the context; only its mapping is left.
		return nil, errors.Join(err, qp.Close())
	}
	return qp, nil
}

// Num is the QP number.
func (qp *QP) Num() uint32 { return qp.num }

// Type is the QP's transport type.
func (qp *QP) Type() ib.QPType { return qp.typ }

// Cap is the sizes the kernel granted.
func (qp *QP) Cap() QPCap { return qp.cap }

// QPAttrMask selects the QPAttr fields a Modify or Query concerns (enum
// ib_qp_attr_mask).
type QPAttrMask uint32

// QP attribute mask bits.
const (
	QPAttrState            QPAttrMask = 1 << 0
	QPAttrCurState         QPAttrMask = 1 << 1
	QPAttrEnSQDAsyncNotify QPAttrMask = 1 << 2
	QPAttrAccessFlags      QPAttrMask = 1 << 3
	QPAttrPKeyIndex        QPAttrMask = 1 << 4
	QPAttrPort             QPAttrMask = 1 << 5
	QPAttrQKey             QPAttrMask = 1 << 6
	QPAttrAV               QPAttrMask = 1 << 7
	QPAttrPathMTU          QPAttrMask = 1 << 8
	QPAttrTimeout          QPAttrMask = 1 << 9
	QPAttrRetryCnt         QPAttrMask = 1 << 10
	QPAttrRNRRetry         QPAttrMask = 1 << 11
	QPAttrRQPSN            QPAttrMask = 1 << 12
	QPAttrMaxQPRdAtomic    QPAttrMask = 1 << 13
	QPAttrAltPath          QPAttrMask = 1 << 14
	QPAttrMinRNRTimer      QPAttrMask = 1 << 15
	QPAttrSQPSN            QPAttrMask = 1 << 16
	QPAttrMaxDestRdAtomic  QPAttrMask = 1 << 17
	QPAttrPathMigState     QPAttrMask = 1 << 18
	QPAttrCap              QPAttrMask = 1 << 19
	QPAttrDestQPN          QPAttrMask = 1 << 20
)

// QPAttr is a QP's modifiable attributes (struct ib_uverbs_modify_qp,
// ib_uverbs_query_qp_resp).
type QPAttr struct {
	State            ib.QPState
	CurState         ib.QPState
	PathMTU          ib.MTU
	PathMigState     ib.PathMigState
	QKey             uint32
	RQPSN            uint32
	SQPSN            uint32
	DestQPN          uint32
	AccessFlags      Access
	Cap              QPCap // Query only
	AH               AHAttr
	AltAH            AHAttr
	PKeyIndex        uint16
	AltPKeyIndex     uint16
	EnSQDAsyncNotify bool
	SQDraining       bool // Query only
	MaxRdAtomic      uint8
	MaxDestRdAtomic  uint8
	MinRNRTimer      uint8
	Port             uint8
	Timeout          uint8
	RetryCnt         uint8
	RNRRetry         uint8
	AltPort          uint8
	AltTimeout       uint8
	SQSigAll         bool // Query only
}

// Modify changes the attributes mask selects, e.g. RESET→INIT with
// QPAttrState|QPAttrPKeyIndex|QPAttrPort|QPAttrAccessFlags.
func (qp *QP) Modify(attr *QPAttr, mask QPAttrMask) error {
	op := fmt.Sprintf("modify qp %d to %v", qp.num, attr.State)
	done, err := qp.use(op)
	if err != nil {
		return err
	}
	defer done()
	req := abi.ModifyQp{Dest: attr.AH.dest(), AltDest: attr.AltAH.dest(), QpHandle: qp.handle, AttrMask: uint32(mask),
		Qkey: attr.QKey, RqPsn: attr.RQPSN, SqPsn: attr.SQPSN, DestQpNum: attr.DestQPN, QpAccessFlags: uint32(attr.AccessFlags),
		PkeyIndex: attr.PKeyIndex, AltPkeyIndex: attr.AltPKeyIndex, QpState: uint8(attr.State), CurQpState: uint8(attr.CurState),
		PathMtu: uint8(attr.PathMTU), PathMigState: uint8(attr.PathMigState), EnSqdAsyncNotify: b2u(attr.EnSQDAsyncNotify),
		MaxRdAtomic: attr.MaxRdAtomic, MaxDestRdAtomic: attr.MaxDestRdAtomic, MinRnrTimer: attr.MinRNRTimer,
		PortNum: attr.Port, Timeout: attr.Timeout, RetryCnt: attr.RetryCnt, RnrRetry: attr.RNRRetry,
		AltPortNum: attr.AltPort, AltTimeout: attr.AltTimeout}
	return qp.ctx.write(op, abi.CmdModifyQp.Build(&req, nil))
}

// Query returns the QP's attributes; mask says which the caller needs
// (drivers may fill more).
func (qp *QP) Query(mask QPAttrMask) (*QPAttr, error) {
	op := fmt.Sprintf("query qp %d", qp.num)
	done, err := qp.use(op)
	if err != nil {
		return nil, err
	}
	defer done()
	req := abi.QueryQp{QpHandle: qp.handle, AttrMask: uint32(mask)}
	var r abi.QueryQpResp
	if err := qp.ctx.write(op, abi.CmdQueryQp.Build(&req, &r, nil, nil)); err != nil {
		return nil, err
	}
	return decodeQPAttr(&r), nil
}

func decodeQPAttr(r *abi.QueryQpResp) *QPAttr {
	return &QPAttr{State: ib.QPState(r.QpState), CurState: ib.QPState(r.CurQpState), PathMTU: ib.MTU(r.PathMtu),
		PathMigState: ib.PathMigState(r.PathMigState), QKey: r.Qkey, RQPSN: r.RqPsn, SQPSN: r.SqPsn, DestQPN: r.DestQpNum,
		AccessFlags: Access(r.QpAccessFlags), Cap: QPCap{r.MaxSendWr, r.MaxRecvWr, r.MaxSendSge, r.MaxRecvSge, r.MaxInlineData},
		AH: ahFromDest(r.Dest), AltAH: ahFromDest(r.AltDest), PKeyIndex: r.PkeyIndex, AltPKeyIndex: r.AltPkeyIndex,
		SQDraining: r.SqDraining != 0, MaxRdAtomic: r.MaxRdAtomic, MaxDestRdAtomic: r.MaxDestRdAtomic,
		MinRNRTimer: r.MinRnrTimer, Port: r.PortNum, Timeout: r.Timeout, RetryCnt: r.RetryCnt, RNRRetry: r.RnrRetry,
		AltPort: r.AltPortNum, AltTimeout: r.AltTimeout, SQSigAll: r.SqSigAll != 0}
}

// Close destroys the QP and unmaps its queues. Safe to call more than
// once, and concurrently with any other use: a post or command after it,
// and a Drain waiting for the QP, fail with an error matching
// os.ErrClosed.
func (qp *QP) Close() error {
	return qp.destroyAndRelease(quietly(qp.ops, func() error {
		req := abi.DestroyQp{QpHandle: qp.handle}
		var resp abi.DestroyQpResp
		err := qp.ctx.write(fmt.Sprintf("destroy qp %d", qp.num), abi.CmdDestroyQp.Build(&req, &resp, nil, nil))
		if err == nil {
			qp.ctx.unregister(qp.userHandle)
		}
		return err
	}), qp.release)
}

func (qp *QP) release() error {
	if qp.ops == nil {
		return nil
	}
	return qp.ops.release()
}
