package uverbs

import (
	"fmt"

	"github.com/rdmastack/rdmastack/ib"
	"github.com/rdmastack/rdmastack/internal/kabi"
	"github.com/rdmastack/rdmastack/uverbs/internal/abi"
)

// PD is a protection domain.
type PD struct {
	object
	pdn uint32
}

// AllocPD allocates a protection domain.
func (c *Context) AllocPD() (*PD, error) {
	var req abi.AllocPd
	var resp abi.AllocPdResp
	drv := make([]byte, c.prov.udata().allocPDOut)
	if err := c.write("alloc pd", abi.CmdAllocPd.Build(&req, &resp, nil, drv)); err != nil {
		return nil, err
	}
	pd := &PD{object: object{ctx: c, handle: resp.PdHandle, kind: "pd"}}
	if c.dev.DriverID == ib.DriverMLX5 {
		pd.pdn = kabi.Decode[abi.Mlx5IbAllocPdResp](drv).Pdn
	}
	return pd, nil
}

// PDN is the hardware PD number for drivers that report it (mlx5's
// struct mlx5_ib_alloc_pd_resp); 0 for the others.
func (pd *PD) PDN() uint32 { return pd.pdn }

// Context is the context the protection domain belongs to: what creates
// the QPs, CQs and MRs that may use it.
func (pd *PD) Context() *Context { return pd.ctx }

// Close deallocates the protection domain. While objects created in it
// live, or one being created names it, the kernel refuses (EBUSY) and
// the PD stays usable. Safe to call more than once, and concurrently.
func (pd *PD) Close() error {
	return pd.destroy(func() error {
		req := abi.DeallocPd{PdHandle: pd.handle}
		return pd.ctx.write(fmt.Sprintf("dealloc pd %d", pd.handle), abi.CmdDeallocPd.Build(&req, nil))
	})
}
