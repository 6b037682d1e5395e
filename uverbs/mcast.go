package uverbs

import (
	"fmt"

	"github.com/rdmastack/rdmastack/ib"
	"github.com/rdmastack/rdmastack/uverbs/internal/abi"
)

// AttachMcast attaches a UD QP to the multicast group gid (LID lid; 0 on
// RoCE) (ibv_attach_mcast): datagrams sent to the group reach the QP.
// librdmacm does it on MULTICAST_JOIN with the event's DGID and DLID.
func (qp *QP) AttachMcast(gid ib.GID, lid uint16) error {
	op := fmt.Sprintf("attach qp %d to %v", qp.num, gid)
	req := abi.AttachMcast{Gid: gid, QpHandle: qp.handle, Mlid: lid}
	return qp.mcast(op, abi.CmdAttachMcast.Build(&req, nil))
}

// DetachMcast detaches the QP from the group (ibv_detach_mcast).
func (qp *QP) DetachMcast(gid ib.GID, lid uint16) error {
	op := fmt.Sprintf("detach qp %d from %v", qp.num, gid)
	req := abi.DetachMcast{Gid: gid, QpHandle: qp.handle, Mlid: lid}
	return qp.mcast(op, abi.CmdDetachMcast.Build(&req, nil))
}

func (qp *QP) mcast(op string, w *abi.WriteCmd) error {
	if qp.typ != ib.QPTypeUD {
		return invalid(qp.ctx.dev.Name, op, "only UD QPs join multicast groups")
	}
	done, err := qp.use(op)
	if err != nil {
		return err
	}
	defer done()
	return qp.ctx.write(op, w)
}
