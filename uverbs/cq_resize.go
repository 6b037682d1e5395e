package uverbs

import (
	"fmt"

	"github.com/rdmastack/rdmastack/uverbs/internal/abi"
)

// Resize gives the CQ room for at least cqe entries (RESIZE_CQ); CQE
// then reports the number the kernel granted. rxe moves the queue to new
// memory (struct rxe_resize_cq_resp has the layout of
// rxe_create_cq_resp), and the CQ maps the new queue. A cqe below the
// entries the queue holds gives EINVAL. siw cannot resize (an error
// matching ErrNotSupported); on mlx5 it is refused before anything is
// sent, as the new buffer would come from a user-space provider. Resize
// must not run concurrently with Poll.
func (cq *CQ) Resize(cqe int) error {
	c := cq.ctx
	op := fmt.Sprintf("resize cq %d", cq.handle)
	if cqe < 1 || cqe > 1<<31-1 {
		return invalid(c.dev.Name, op, "cqe %d out of range", cqe)
	}
	if c.prov.traits().iwarp {
		return c.unsupported(op, "resizing a CQ")
	}
	if _, err := c.dataPath(op, "CQ"); err != nil {
		return err
	}
	done, err := cq.useExclusive(op)
	if err != nil {
		return err
	}
	defer done()
	req := abi.ResizeCq{CqHandle: cq.handle, Cqe: uint32(cqe)}
	var resp abi.ResizeCqResp
	drv := make([]byte, c.prov.udata().resizeCQOut)
	if err := c.write(op, abi.CmdResizeCq.Build(&req, &resp, nil, drv)); err != nil {
		return err
	}
	cq.cqe = int(resp.Cqe)
	if len(drv) > 0 {
		cq.driver = drv
	}
	if cq.ops != nil {
		if err := cq.ops.resized(); err != nil {
			return cq.fail("resize", err)
		}
	}
	return nil
}
