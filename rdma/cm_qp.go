package rdma

import (
	"errors"
	"fmt"

	"github.com/rdmastack/rdmastack/ib"
	"github.com/rdmastack/rdmastack/internal/kabi"
	"github.com/rdmastack/rdmastack/rdma/internal/ucma"
	"github.com/rdmastack/rdmastack/uverbs"
)

// CreateQP creates the id's QP (rdma_create_qp) in pd, which must belong
// to the id's device context (Device().Context()); init.Type is ignored
// (the id's type is used). The kernel's connection manager gives the
// attributes: an RC QP is moved to INIT and connected by Connect or
// Accept; a UD QP is moved to INIT, RTR and RTS at once, with the id's
// qkey. The QP belongs to the id: Close destroys it. An id has one QP: a
// second CreateQP, or one while another runs, fails with ErrQPExists;
// one that Close overtakes fails with an error matching os.ErrClosed,
// having destroyed what it made.
func (id *ID) CreateQP(pd *uverbs.PD, init uverbs.QPInit) (*uverbs.QP, error) {
	const op = "create qp"
	id.mu.Lock()
	dev := id.dev
	err := id.begin(op)
	switch {
	case err != nil:
	case id.qp != nil || id.busy:
		id.end()
		err = fmt.Errorf("rdma: %s: %w", op, ErrQPExists)
	case dev == nil:
		id.end()
		err = fmt.Errorf("rdma: %s: the id is not bound to a device (resolve its address first): %w", op, errInvalid)
	case pd == nil || pd.Context() != dev.ctx:
		id.end()
		err = fmt.Errorf("rdma: %s: the PD is not of %s's context (Device().Context()): %w", op, dev.name, errInvalid)
	default:
		id.busy = true
	}
	id.mu.Unlock()
	if err != nil {
		return nil, err
	}
	defer id.end()
	qp, err := id.createQP(pd, init)
	// Hand the QP over, unless Close came meanwhile (it set dead and
	// took id.qp under id.mu): then it is this call's to destroy.
	id.mu.Lock()
	id.busy = false
	if err == nil && id.dead {
		err = errClosed
	}
	if err == nil {
		id.qp, id.srq = qp, init.SRQ != nil
	}
	id.mu.Unlock()
	if err != nil {
		if qp != nil {
			err = errors.Join(err, qp.Close())
		}
		return nil, fmt.Errorf("rdma: %s: %w", op, err)
	}
	return qp, nil
}

// createQP makes the QP and moves it to INIT (RTS for UD); on failure it
// returns the QP still to destroy, if one was made.
func (id *ID) createQP(pd *uverbs.PD, init uverbs.QPInit) (*uverbs.QP, error) {
	init.Type = id.qpType
	qp, err := pd.CreateQP(init)
	if err != nil {
		return nil, err
	}
	if err := id.modify(qp, ib.QPStateInit, nil); err != nil {
		return qp, err
	}
	if id.qpType == ib.QPTypeUD {
		err := qp.Modify(&uverbs.QPAttr{State: ib.QPStateRTR}, uverbs.QPAttrState)
		if err == nil {
			err = qp.Modify(&uverbs.QPAttr{State: ib.QPStateRTS}, uverbs.QPAttrState|uverbs.QPAttrSQPSN)
		}
		if err != nil {
			return qp, err
		}
	}
	return qp, nil
}

// InitQPAttr returns the attributes, and the mask of those that count,
// that move a QP of this id to state (rdma_init_qp_attr): for an
// application that drives its own QP.
func (id *ID) InitQPAttr(state ib.QPState) (*uverbs.QPAttr, uverbs.QPAttrMask, error) {
	op := fmt.Sprintf("init qp attr %v", state)
	req := ucma.InitQPAttr{ID: id.handle, QPState: uint32(state)}
	var r ucma.QPAttr
	if err := id.write(op, ucma.RDMA_USER_CM_CMD_INIT_QP_ATTR, kabi.Bytes(&req), 0, kabi.Bytes(&r)); err != nil {
		return nil, 0, err
	}
	return qpAttr(&r), uverbs.QPAttrMask(r.QPAttrMask & ucma.QPAttrVerbsMask), nil
}

// qpAttr converts struct ib_uverbs_qp_attr.
func qpAttr(r *ucma.QPAttr) *uverbs.QPAttr {
	return &uverbs.QPAttr{State: ib.QPState(r.QPState), CurState: ib.QPState(r.CurQPState), PathMTU: ib.MTU(r.PathMTU),
		PathMigState: ib.PathMigState(r.PathMigState), QKey: r.QKey, RQPSN: r.RQPSN, SQPSN: r.SQPSN, DestQPN: r.DestQPNum,
		AccessFlags: uverbs.Access(r.QPAccessFlags),
		Cap:         uverbs.QPCap{MaxSendWR: r.MaxSendWR, MaxRecvWR: r.MaxRecvWR, MaxSendSGE: r.MaxSendSGE, MaxRecvSGE: r.MaxRecvSGE, MaxInlineData: r.MaxInlineData},
		AH:          ahAttr(&r.AhAttr), AltAH: ahAttr(&r.AltAhAttr), PKeyIndex: r.PKeyIndex, AltPKeyIndex: r.AltPKeyIndex,
		EnSQDAsyncNotify: r.EnSQDAsyncNotify != 0, SQDraining: r.SQDraining != 0, MaxRdAtomic: r.MaxRdAtomic,
		MaxDestRdAtomic: r.MaxDestRdAtomic, MinRNRTimer: r.MinRNRTimer, Port: r.PortNum, Timeout: r.Timeout,
		RetryCnt: r.RetryCnt, RNRRetry: r.RNRRetry, AltPort: r.AltPortNum, AltTimeout: r.AltTimeout}
}

// modify moves qp to state with the kernel's attributes; adjust, when
// not nil, changes them first.
func (id *ID) modify(qp *uverbs.QP, state ib.QPState, adjust func(*uverbs.QPAttr)) error {
	attr, mask, err := id.InitQPAttr(state)
	if err != nil {
		return err
	}
	if adjust != nil {
		adjust(attr)
	}
	return qp.Modify(attr, mask)
}

// modifyRTR is librdmacm's ucma_modify_qp_rtr: INIT→INIT with the
// connection's values (the access flags), then RTR, with
// max_dest_rd_atomic = resp unless MaxResources. A peerMTU other than
// zero (ConnParam.PeerPathMTU) caps the path MTU, with this port's
// active MTU.
func (id *ID) modifyRTR(qp *uverbs.QP, resp uint8, peerMTU ib.MTU) error {
	var portMTU ib.MTU
	if peerMTU != 0 {
		var err error
		if portMTU, err = id.activeMTU(); err != nil {
			return err
		}
	}
	if err := id.modify(qp, ib.QPStateInit, nil); err != nil {
		return err
	}
	return id.modify(qp, ib.QPStateRTR, func(a *uverbs.QPAttr) {
		if resp != MaxResources {
			a.MaxDestRdAtomic = resp
		}
		if peerMTU != 0 {
			a.PathMTU = min(a.PathMTU, peerMTU)
		}
		if portMTU != 0 {
			a.PathMTU = min(a.PathMTU, portMTU)
		}
	})
}

// activeMTU queries the active MTU of the id's port now: rxe's follows
// its netdev's MTU, which may have changed since the device was opened.
func (id *ID) activeMTU() (ib.MTU, error) {
	id.mu.Lock()
	dev, port := id.dev, int(id.port)
	id.mu.Unlock()
	if dev == nil {
		return 0, fmt.Errorf("the id is not bound to a device: %w", errInvalid)
	}
	ctx, err := dev.Context()
	if err != nil {
		return 0, err
	}
	a, err := ctx.QueryPort(port)
	if err != nil {
		return 0, err
	}
	return a.ActiveMTU, nil
}

// modifyRTS is ucma_modify_qp_rts: RTS with max_rd_atomic = depth unless
// MaxResources.
func (id *ID) modifyRTS(qp *uverbs.QP, depth uint8) error {
	return id.modify(qp, ib.QPStateRTS, func(a *uverbs.QPAttr) {
		if depth != MaxResources {
			a.MaxRdAtomic = depth
		}
	})
}

// failQP moves qp to the error state after a failed transition.
func (id *ID) failQP(op string, qp *uverbs.QP, err error) error {
	qp.Modify(&uverbs.QPAttr{State: ib.QPStateErr}, uverbs.QPAttrState)
	return fmt.Errorf("rdma: %s: %w", op, err)
}

// onEvent does what an event requires of its id before the application
// sees it (librdmacm's rdma_get_cm_event).
func (id *ID) onEvent(ev *Event) {
	switch ev.Type {
	case EventAddrResolved:
		if _, err := id.queryAddr(); err != nil {
			ev.Type, ev.Status = EventAddrError, err
		}
	case EventConnectResponse:
		qp := id.QP()
		if qp == nil {
			return // the application establishes (Establish)
		}
		var peerMTU ib.MTU
		id.mu.Lock()
		f := id.peerMTU
		id.mu.Unlock()
		if f != nil {
			peerMTU = f(ev.PrivateData)
		}
		err := id.modifyRTR(qp, MaxResources, peerMTU)
		if err == nil {
			err = id.modifyRTS(qp, MaxResources)
		}
		if err == nil {
			err = id.Establish()
		}
		if err != nil {
			qp.Modify(&uverbs.QPAttr{State: ib.QPStateErr}, uverbs.QPAttrState)
			ev.Type, ev.Status = EventConnectError, err
			return
		}
		ev.Type = EventEstablished
	case EventRejected:
		if qp := id.QP(); qp != nil {
			qp.Modify(&uverbs.QPAttr{State: ib.QPStateErr}, uverbs.QPAttrState)
		}
	}
}

// Establish completes an active connection after CONNECT_RESPONSE when
// the application drives its own QP (rdma_establish): it sends the RTU,
// after which the passive side gets ESTABLISHED. GetEvent does it for ids
// with a QP.
func (id *ID) Establish() error {
	req := ucma.Accept{ID: id.handle}
	return id.write("establish", ucma.RDMA_USER_CM_CMD_ACCEPT, kabi.Bytes(&req), 0, nil)
}
