package uverbs

import (
	"fmt"
	"sync/atomic"

	"github.com/rdmastack/rdmastack/uverbs/internal/abi"
)

// MWType is a memory window's type (enum ib_uverbs_mw_type).
type MWType uint8

// Memory window types.
const (
	// MWType1 windows are bound by QP.BindMW, may be rebound at any time,
	// and are unbound by binding them with length 0.
	MWType1 MWType = 1
	// MWType2 windows are bound by a send work request (OpBindMW) on a
	// QP of their PD, and unbound by invalidation (OpLocalInv, or a peer's
	// OpSendWithInv).
	MWType2 MWType = 2
)

func (t MWType) String() string {
	switch t {
	case MWType1:
		return "type 1"
	case MWType2:
		return "type 2"
	}
	return fmt.Sprintf("MWType(%d)", uint8(t))
}

// MW is a memory window (ibv_mw): a remote key for a range of a memory
// region, bound and unbound on a QP's send queue.
type MW struct {
	object
	typ  MWType
	rkey atomic.Uint32
}

// AllocMW allocates a memory window in pd (ibv_alloc_mw). rxe has both
// types; a device without windows gives an error matching
// ErrNotSupported.
func (pd *PD) AllocMW(typ MWType) (*MW, error) {
	c := pd.ctx
	const op = "alloc mw"
	if typ != MWType1 && typ != MWType2 {
		return nil, invalid(c.dev.Name, op, "memory window %v", typ)
	}
	if c.prov.traits().iwarp {
		return nil, c.unsupported(op, "a memory window")
	}
	done, err := pd.use(op)
	if err != nil {
		return nil, err
	}
	defer done()
	req := abi.AllocMw{PdHandle: pd.handle, MwType: uint8(typ)}
	var resp abi.AllocMwResp
	if err := c.write(op, abi.CmdAllocMw.Build(&req, &resp, nil, nil)); err != nil {
		return nil, err
	}
	mw := &MW{object: object{ctx: c, handle: resp.MwHandle, kind: "mw", id: resp.MwHandle}, typ: typ}
	mw.rkey.Store(resp.Rkey)
	return mw, nil
}

// Type is the window's type.
func (mw *MW) Type() MWType { return mw.typ }

// RKey is the window's remote key: what a peer names in RDMA and atomic
// work requests once the window is bound. Binding a type 1 window gives
// it a new key; a type 2 window takes the key its bind work request
// names (MWRKey). Posting the bind updates it.
func (mw *MW) RKey() uint32 { return mw.rkey.Load() }

// NextRKey is the window's key with its low byte (the consumer's part)
// advanced, as ibv_inc_rkey makes it: the key a bind should give the
// window, so that one bound before no longer works.
func (mw *MW) NextRKey() uint32 {
	k := mw.rkey.Load()
	return k&^0xff | (k+1)&0xff
}

// Close deallocates the window (ibv_dealloc_mw). Safe to call more than
// once.
func (mw *MW) Close() error {
	return mw.destroy(func() error {
		req := abi.DeallocMw{MwHandle: mw.handle}
		return mw.ctx.write(fmt.Sprintf("dealloc mw %d", mw.handle), abi.CmdDeallocMw.Build(&req, nil))
	})
}

// MWBind is what a window is bound to (struct ibv_mw_bind_info): Length
// bytes at Addr of the memory region with key LKey, which must have been
// registered with AccessMWBind, and the remote access the window grants
// (AccessRemoteRead, AccessRemoteWrite, AccessRemoteAtomic, and
// AccessZeroBased for type 2 windows).
type MWBind struct {
	LKey   uint32
	Addr   uint64
	Length uint64
	Access Access
}

// BindMW binds a type 1 window (ibv_bind_mw): it posts a bind work
// request with id and flags (SendSignaled for a completion, WCBindMW) and
// returns the window's new key, which RKey reports from then on. A bind
// with Length 0 unbinds the window.
func (qp *QP) BindMW(mw *MW, bind MWBind, id uint64, flags SendFlags) (uint32, error) {
	const op = "bind mw"
	if mw.typ != MWType1 {
		return 0, qp.invalid(op, "%v window: bind it with an OpBindMW work request", mw.typ)
	}
	if err := mw.live(op); err != nil {
		return 0, err
	}
	rkey := mw.NextRKey()
	if err := qp.PostSend(&SendWR{ID: id, Opcode: OpBindMW, Flags: flags, MW: mw, MWRKey: rkey, MWBind: bind}); err != nil {
		return 0, err
	}
	return rkey, nil
}
