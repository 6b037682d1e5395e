package uverbs

import (
	"fmt"

	"github.com/rdmastack/rdmastack/uverbs/internal/abi"
)

// PD is a protection domain.
type PD struct{ object }

// AllocPD allocates a protection domain.
func (c *Context) AllocPD() (*PD, error) {
	var req abi.AllocPd
	var resp abi.AllocPdResp
	if err := c.write("alloc pd", &abi.WriteCmd{Command: abi.IB_USER_VERBS_CMD_ALLOC_PD,
		Req: abi.Bytes(&req), Resp: abi.Bytes(&resp)}); err != nil {
		return nil, err
	}
	return &PD{object{ctx: c, handle: resp.PdHandle}}, nil
}

// Close deallocates the protection domain. While objects created in it
// live the kernel refuses (EBUSY) and the PD stays usable. Safe to call
// more than once.
func (pd *PD) Close() error {
	return pd.destroy(func() error {
		req := abi.DeallocPd{PdHandle: pd.handle}
		return pd.ctx.write(fmt.Sprintf("dealloc pd %d", pd.handle), &abi.WriteCmd{Command: abi.IB_USER_VERBS_CMD_DEALLOC_PD, Req: abi.Bytes(&req)})
	})
}
