package uverbs

import (
	"errors"
	"fmt"

	"github.com/rdmastack/rdmastack/uverbs/internal/abi"
)

// SRQ is a shared receive queue.
type SRQ struct {
	object
	userHandle uint64
	num        uint32
	maxWR      uint32
	maxSGE     uint32
	driver     []byte // the driver's create response
	ops        srqOps // the provider's; nil on a context without a char device
}

// SRQAttr is what CreateSRQ needs.
type SRQAttr struct {
	MaxWR    uint32
	MaxSGE   uint32
	SRQLimit uint32
}

// CreateSRQ creates a shared receive queue in pd.
func (pd *PD) CreateSRQ(attr SRQAttr) (*SRQ, error) {
	c := pd.ctx
	const op = "create srq"
	if attr.MaxWR == 0 || attr.MaxSGE == 0 {
		return nil, invalid(c.dev.Name, op, "max_wr and max_sge must be at least 1")
	}
	dp, err := c.dataPath(op, "SRQ")
	if err != nil {
		return nil, err
	}
	done, err := pd.use(op)
	if err != nil {
		return nil, err
	}
	defer done()
	srq := &SRQ{object: object{ctx: c, kind: "srq"}, userHandle: c.newHandle()}
	req := abi.CreateSrq{UserHandle: srq.userHandle, PdHandle: pd.handle, MaxWr: attr.MaxWR, MaxSge: attr.MaxSGE, SrqLimit: attr.SRQLimit}
	var resp abi.CreateSrqResp
	d, err := c.prov.prepareSRQ(&attr)
	if err != nil {
		return nil, wrap(c.dev.Name, op, err)
	}
	if err := c.write(op, abi.CmdCreateSrq.Build(&req, &resp, d.in, d.out)); err != nil {
		d.failed()
		return nil, err
	}
	srq.handle, srq.num, srq.maxWR, srq.maxSGE = resp.SrqHandle, resp.Srqn, resp.MaxWr, resp.MaxSge
	srq.driver = d.out
	if srq.num == 0 {
		srq.num = c.prov.srqNum(d.out) // rxe reports it in its driver response
	}
	srq.id = srq.num
	if dp {
		if srq.ops, err = c.prov.newSRQ(srq, d); err != nil {
			err = srq.fail("map", err)
			return nil, errors.Join(err, srq.Close())
		}
	}
	if err := c.adopt(op, srq.userHandle, srq); err != nil {
		// The SRQ died with the context; only its mapping is left.
		return nil, errors.Join(err, srq.Close())
	}
	return srq, nil
}

// Num is the SRQ number (srqn; rxe reports it in its driver response).
func (s *SRQ) Num() uint32 { return s.num }

// MaxWR and MaxSGE are the sizes the kernel granted.
func (s *SRQ) MaxWR() uint32 { return s.maxWR }

// MaxSGE is the scatter/gather limit the kernel granted.
func (s *SRQ) MaxSGE() uint32 { return s.maxSGE }

// Query returns the SRQ's current attributes.
func (s *SRQ) Query() (SRQAttr, error) {
	op := fmt.Sprintf("query srq %d", s.handle)
	done, err := s.use(op)
	if err != nil {
		return SRQAttr{}, err
	}
	defer done()
	return s.query(op)
}

// query sends QUERY_SRQ; the caller holds the SRQ open.
func (s *SRQ) query(op string) (SRQAttr, error) {
	req := abi.QuerySrq{SrqHandle: s.handle}
	var resp abi.QuerySrqResp
	if err := s.ctx.write(op, abi.CmdQuerySrq.Build(&req, &resp, nil, nil)); err != nil {
		return SRQAttr{}, err
	}
	return SRQAttr{MaxWR: resp.MaxWr, MaxSGE: resp.MaxSge, SRQLimit: resp.SrqLimit}, nil
}

// Close destroys the SRQ. Safe to call more than once, and concurrently
// with any other use; while QPs use it, or one being created names it,
// the kernel refuses (EBUSY) and the SRQ stays usable.
func (s *SRQ) Close() error {
	return s.destroyAndRelease(func() error {
		req := abi.DestroySrq{SrqHandle: s.handle}
		var resp abi.DestroySrqResp
		err := s.ctx.write(fmt.Sprintf("destroy srq %d", s.handle), abi.CmdDestroySrq.Build(&req, &resp, nil, nil))
		if err == nil {
			s.ctx.unregister(s.userHandle)
		}
		return err
	}, s.release)
}

func (s *SRQ) release() error {
	if s.ops == nil {
		return nil
	}
	return s.ops.release()
}
