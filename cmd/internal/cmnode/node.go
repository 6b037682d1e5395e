package cmnode

import (
	"context"
	"errors"
	"fmt"

	"github.com/rdmastack/rdmastack/ib"
	"github.com/rdmastack/rdmastack/rdma"
	"github.com/rdmastack/rdmastack/uverbs"
	"github.com/rdmastack/rdmastack/uverbs/membuf"
)

// NodeConfig is what a connection's QP needs.
type NodeConfig struct {
	QPType      ib.QPType // ib.QPTypeRC when zero
	CQE         int       // entries of each CQ
	SplitCQs    bool      // a send CQ and a receive CQ (else one for both)
	CompChannel bool      // the CQs report to a completion channel (armed once)
	Shared      *Channels // with CompChannel: the channel is the context's in Shared, not the node's own
	Cap         uverbs.QPCap
	SigAll      bool

	// OwnQP creates the QP on the PD rather than through the id (rping
	// -q): it is moved to INIT on the id's port with no remote access,
	// and the application moves it on (InitQPAttr) and tells the id its
	// number. Close destroys it before the id.
	OwnQP bool
}

// Node is one connection's verbs resources on its id's device: a PD,
// CQs, an optional completion channel, registered buffers and the id's
// QP. Close releases them and the id.
type Node struct {
	ID     *rdma.ID
	PD     *uverbs.PD
	Chan   *uverbs.CompChannel
	SendCQ *uverbs.CQ
	RecvCQ *uverbs.CQ // SendCQ when not split
	QP     *uverbs.QP

	own     bool // QP is ours, not the id's
	ownChan bool // Chan is the node's (not Shared's): Close closes it
	bufs    []*membuf.Buffer
	mrs     []*membuf.MR
}

// NewNode makes the resources on id's device (bound by resolving or by
// a connection request) and the id's QP, in INIT.
func NewNode(id *rdma.ID, cfg NodeConfig) (_ *Node, err error) {
	dev := id.Device()
	if dev == nil {
		return nil, errors.New("the id has no device")
	}
	ctx, err := dev.Context()
	if err != nil {
		return nil, err
	}
	n := &Node{ID: id}
	defer func() {
		if err != nil {
			n.release()
		}
	}()
	if n.PD, err = ctx.AllocPD(); err != nil {
		return nil, fmt.Errorf("alloc pd: %w", err)
	}
	if cfg.CompChannel && cfg.Shared != nil {
		if n.Chan, err = cfg.Shared.of(ctx); err != nil {
			return nil, fmt.Errorf("create comp channel: %w", err)
		}
	} else if cfg.CompChannel {
		if n.Chan, err = ctx.CreateCompChannel(); err != nil {
			return nil, fmt.Errorf("create comp channel: %w", err)
		}
		n.ownChan = true
	}
	if n.SendCQ, err = ctx.CreateCQ(uverbs.CQAttr{CQE: cfg.CQE, CompChannel: n.Chan}); err != nil {
		return nil, fmt.Errorf("create cq: %w", err)
	}
	n.RecvCQ = n.SendCQ
	if cfg.SplitCQs {
		if n.RecvCQ, err = ctx.CreateCQ(uverbs.CQAttr{CQE: cfg.CQE, CompChannel: n.Chan}); err != nil {
			return nil, fmt.Errorf("create cq: %w", err)
		}
	}
	if n.Chan != nil {
		for _, cq := range n.cqs() {
			if err := cq.RequestNotify(false); err != nil {
				return nil, fmt.Errorf("req notify cq: %w", err)
			}
		}
	}
	typ := cfg.QPType
	if typ == 0 {
		typ = ib.QPTypeRC
	}
	init := uverbs.QPInit{Type: typ, SendCQ: n.SendCQ, RecvCQ: n.RecvCQ, Cap: cfg.Cap, SQSigAll: cfg.SigAll}
	if !cfg.OwnQP {
		if n.QP, err = id.CreateQP(n.PD, init); err != nil {
			return nil, err
		}
		return n, nil
	}
	if n.QP, err = n.PD.CreateQP(init); err != nil {
		return nil, fmt.Errorf("create qp: %w", err)
	}
	n.own = true
	attr := &uverbs.QPAttr{State: ib.QPStateInit, PKeyIndex: 0, Port: uint8(id.Port())}
	if err := n.QP.Modify(attr, uverbs.QPAttrState|uverbs.QPAttrPKeyIndex|uverbs.QPAttrPort|uverbs.QPAttrAccessFlags); err != nil {
		return nil, fmt.Errorf("modify qp: %w", err)
	}
	return n, nil
}

func (n *Node) cqs() []*uverbs.CQ {
	if n.RecvCQ != n.SendCQ && n.RecvCQ != nil {
		return []*uverbs.CQ{n.SendCQ, n.RecvCQ}
	}
	if n.SendCQ != nil {
		return []*uverbs.CQ{n.SendCQ}
	}
	return nil
}

// Buffer maps and registers size bytes.
func (n *Node) Buffer(size int, access uverbs.Access) (*membuf.Buffer, *membuf.MR, error) {
	b, err := membuf.New(max(size, 1))
	if err != nil {
		return nil, nil, err
	}
	mr, err := b.Register(n.PD, access)
	if err != nil {
		b.Close()
		return nil, nil, fmt.Errorf("reg mr: %w", err)
	}
	n.bufs, n.mrs = append(n.bufs, b), append(n.mrs, mr)
	return b, mr, nil
}

// Wait returns the next completion of cq, waiting on the completion
// channel (re-arming the CQ that reported) when there is one, and
// busy-polling otherwise. It returns ctx's error once ctx is done.
// Completions with an error status are returned too.
func (n *Node) Wait(ctx context.Context, cq *uverbs.CQ) (uverbs.WC, error) {
	var wc [1]uverbs.WC
	for {
		k, err := cq.Poll(wc[:])
		if err != nil {
			return uverbs.WC{}, err
		}
		if k == 1 {
			return wc[0], nil
		}
		if err := ctx.Err(); err != nil {
			return uverbs.WC{}, err
		}
		if n.Chan == nil {
			continue
		}
		ev, err := n.Chan.GetEvent(ctx)
		if err != nil {
			return uverbs.WC{}, err
		}
		// The event may be another CQ's (the node's other one, or, on a
		// shared channel, another node's): re-arm that one, and poll
		// this one again either way; its owner polls before it waits.
		ev.AckEvents(1)
		if err := ev.RequestNotify(false); err != nil {
			return uverbs.WC{}, err
		}
	}
}

// Close destroys the QP and the id, then the verbs resources.
func (n *Node) Close() error {
	var errs []error
	if n.own && n.QP != nil {
		errs = append(errs, n.QP.Close())
		n.QP = nil
	}
	errs = append(errs, n.ID.Close())
	return errors.Join(append(errs, n.release())...)
}

// Modify moves an own QP (OwnQP) to state with the attributes the
// connection manager gives (rdma_init_qp_attr + ibv_modify_qp).
func (n *Node) Modify(state ib.QPState) error {
	attr, mask, err := n.ID.InitQPAttr(state)
	if err != nil {
		return err
	}
	return n.QP.Modify(attr, mask)
}

func (n *Node) release() error {
	var errs []error
	if n.own && n.QP != nil {
		errs = append(errs, n.QP.Close())
		n.QP = nil
	}
	for _, mr := range n.mrs {
		errs = append(errs, mr.Close())
	}
	for _, b := range n.bufs {
		errs = append(errs, b.Close())
	}
	n.mrs, n.bufs = nil, nil
	for _, cq := range n.cqs() {
		errs = append(errs, cq.Close())
	}
	n.SendCQ, n.RecvCQ = nil, nil
	if n.Chan != nil && n.ownChan {
		errs = append(errs, n.Chan.Close())
	}
	n.Chan = nil
	if n.PD != nil {
		errs = append(errs, n.PD.Close())
		n.PD = nil
	}
	return errors.Join(errs...)
}
