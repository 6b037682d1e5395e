package uverbs

import (
	"errors"

	"golang.org/x/sys/unix"

	"github.com/rdmastack/rdmastack/internal/kabi"
	"github.com/rdmastack/rdmastack/uverbs/internal/abi"
)

// Creating and destroying CQs, QPs and SRQs goes through their own ioctl
// methods (UVERBS_METHOD_CQ_CREATE and friends) where the kernel has
// them, as libibverbs does: the write() command the object's code builds
// is translated here, and the method's answer written back into the
// command's response as write() would have filled it. A kernel without
// the method (EPROTONOSUPPORT, ENOTTY) gets the write() command instead
// (through INVOKE_WRITE or write()), and is not asked again.

// methodCommands are the write() commands that have an ioctl method.
var methodCommands = map[uint32]bool{
	abi.IB_USER_VERBS_CMD_CREATE_CQ: true, abi.IB_USER_VERBS_CMD_DESTROY_CQ: true,
	abi.IB_USER_VERBS_CMD_CREATE_QP: true, abi.IB_USER_VERBS_CMD_DESTROY_QP: true,
	abi.IB_USER_VERBS_CMD_CREATE_SRQ: true, abi.IB_USER_VERBS_CMD_DESTROY_SRQ: true,
}

// viaMethod runs w through its ioctl method. done is false when the
// command has none, or the kernel lacks it; the caller then sends w.
func (c *Context) viaMethod(w *abi.WriteCmd) (done bool, err error) {
	if !c.ioctlOK || !methodCommands[w.Command] || c.noMethod.Load()&(1<<w.Command) != 0 {
		return false, nil
	}
	call, finish := c.methodCall(w)
	err = c.k.ioctl(call, c.driver)
	if errors.Is(err, unix.EPROTONOSUPPORT) || errors.Is(err, unix.ENOTTY) {
		c.noMethod.Or(1 << w.Command)
		return false, nil
	}
	if err == nil {
		finish()
	}
	return true, err
}

// eventFD adds the context's async event fd as the object's event fd
// (optional: kernels before it send the object's events there anyway).
func (c *Context) eventFD(call *abi.Ioctl, id uint16) {
	if c.asyncFD >= 0 {
		call.FD(id, int32(c.asyncFD))
		call.Optional()
	}
}

// methodCall builds the ioctl form of w, and the function that writes its
// answer into w.Resp.
func (c *Context) methodCall(w *abi.WriteCmd) (*abi.Ioctl, func()) {
	switch w.Command {
	case abi.IB_USER_VERBS_CMD_CREATE_CQ:
		r := kabi.Decode[abi.CreateCq](w.Req)
		var cqe uint32
		call := abi.NewIoctl(abi.UVERBS_OBJECT_CQ, abi.UVERBS_METHOD_CQ_CREATE)
		h := call.NewHandle(abi.UVERBS_ATTR_CREATE_CQ_HANDLE)
		call.Out(abi.UVERBS_ATTR_CREATE_CQ_RESP_CQE, kabi.Bytes(&cqe))
		call.InU32(abi.UVERBS_ATTR_CREATE_CQ_CQE, r.Cqe)
		call.InU64(abi.UVERBS_ATTR_CREATE_CQ_USER_HANDLE, r.UserHandle)
		if r.CompChannel >= 0 {
			call.FD(abi.UVERBS_ATTR_CREATE_CQ_COMP_CHANNEL, r.CompChannel)
		}
		call.InU32(abi.UVERBS_ATTR_CREATE_CQ_COMP_VECTOR, r.CompVector)
		c.eventFD(call, abi.UVERBS_ATTR_CREATE_CQ_EVENT_FD)
		call.UHWIn(w.DriverIn)
		call.UHWOut(w.DriverOut)
		return call, func() {
			resp := abi.CreateCqResp{CqHandle: uint32(call.Data(h)), Cqe: cqe}
			copy(w.Resp, kabi.Bytes(&resp))
		}
	case abi.IB_USER_VERBS_CMD_CREATE_QP:
		r := kabi.Decode[abi.CreateQp](w.Req)
		var qpn uint32
		var cap abi.QpCap
		call := abi.NewIoctl(abi.UVERBS_OBJECT_QP, abi.UVERBS_METHOD_QP_CREATE)
		call.Handle(abi.UVERBS_ATTR_CREATE_QP_PD_HANDLE, r.PdHandle)
		call.Handle(abi.UVERBS_ATTR_CREATE_QP_SEND_CQ_HANDLE, r.SendCqHandle)
		call.Handle(abi.UVERBS_ATTR_CREATE_QP_RECV_CQ_HANDLE, r.RecvCqHandle)
		h := call.NewHandle(abi.UVERBS_ATTR_CREATE_QP_HANDLE)
		call.Const(abi.UVERBS_ATTR_CREATE_QP_TYPE, uint64(r.QpType))
		call.InU64(abi.UVERBS_ATTR_CREATE_QP_USER_HANDLE, r.UserHandle)
		in := abi.QpCap{MaxSendWr: r.MaxSendWr, MaxRecvWr: r.MaxRecvWr, MaxSendSge: r.MaxSendSge, MaxRecvSge: r.MaxRecvSge, MaxInlineData: r.MaxInlineData}
		call.In(abi.UVERBS_ATTR_CREATE_QP_CAP, kabi.Bytes(&in))
		c.eventFD(call, abi.UVERBS_ATTR_CREATE_QP_EVENT_FD)
		if r.SqSigAll != 0 {
			call.InU32(abi.UVERBS_ATTR_CREATE_QP_FLAGS, abi.IB_UVERBS_QP_CREATE_SQ_SIG_ALL)
		}
		if r.IsSrq != 0 {
			call.Handle(abi.UVERBS_ATTR_CREATE_QP_SRQ_HANDLE, r.SrqHandle)
		}
		call.Out(abi.UVERBS_ATTR_CREATE_QP_RESP_CAP, kabi.Bytes(&cap))
		call.Out(abi.UVERBS_ATTR_CREATE_QP_RESP_QP_NUM, kabi.Bytes(&qpn))
		call.UHWIn(w.DriverIn)
		call.UHWOut(w.DriverOut)
		return call, func() {
			resp := abi.CreateQpResp{QpHandle: uint32(call.Data(h)), Qpn: qpn, MaxSendWr: cap.MaxSendWr, MaxRecvWr: cap.MaxRecvWr,
				MaxSendSge: cap.MaxSendSge, MaxRecvSge: cap.MaxRecvSge, MaxInlineData: cap.MaxInlineData}
			copy(w.Resp, kabi.Bytes(&resp))
		}
	case abi.IB_USER_VERBS_CMD_CREATE_SRQ:
		r := kabi.Decode[abi.CreateSrq](w.Req)
		var maxWR, maxSGE, srqn uint32
		call := abi.NewIoctl(abi.UVERBS_OBJECT_SRQ, abi.UVERBS_METHOD_SRQ_CREATE)
		h := call.NewHandle(abi.UVERBS_ATTR_CREATE_SRQ_HANDLE)
		call.Handle(abi.UVERBS_ATTR_CREATE_SRQ_PD_HANDLE, r.PdHandle)
		call.Const(abi.UVERBS_ATTR_CREATE_SRQ_TYPE, abi.IB_UVERBS_SRQT_BASIC)
		call.InU64(abi.UVERBS_ATTR_CREATE_SRQ_USER_HANDLE, r.UserHandle)
		call.InU32(abi.UVERBS_ATTR_CREATE_SRQ_MAX_WR, r.MaxWr)
		call.InU32(abi.UVERBS_ATTR_CREATE_SRQ_MAX_SGE, r.MaxSge)
		call.InU32(abi.UVERBS_ATTR_CREATE_SRQ_LIMIT, r.SrqLimit)
		c.eventFD(call, abi.UVERBS_ATTR_CREATE_SRQ_EVENT_FD)
		call.Out(abi.UVERBS_ATTR_CREATE_SRQ_RESP_MAX_WR, kabi.Bytes(&maxWR))
		call.Out(abi.UVERBS_ATTR_CREATE_SRQ_RESP_MAX_SGE, kabi.Bytes(&maxSGE))
		call.Out(abi.UVERBS_ATTR_CREATE_SRQ_RESP_SRQ_NUM, kabi.Bytes(&srqn))
		call.UHWIn(w.DriverIn)
		call.UHWOut(w.DriverOut)
		return call, func() {
			resp := abi.CreateSrqResp{SrqHandle: uint32(call.Data(h)), MaxWr: maxWR, MaxSge: maxSGE, Srqn: srqn}
			copy(w.Resp, kabi.Bytes(&resp))
		}
	}
	// The destroys: the handle follows the 8-byte response slot, and the
	// method's response is the write() response.
	obj, method, hid, rid := uint16(abi.UVERBS_OBJECT_CQ), uint16(abi.UVERBS_METHOD_CQ_DESTROY),
		uint16(abi.UVERBS_ATTR_DESTROY_CQ_HANDLE), uint16(abi.UVERBS_ATTR_DESTROY_CQ_RESP)
	switch w.Command {
	case abi.IB_USER_VERBS_CMD_DESTROY_QP:
		obj, method, hid, rid = abi.UVERBS_OBJECT_QP, abi.UVERBS_METHOD_QP_DESTROY, abi.UVERBS_ATTR_DESTROY_QP_HANDLE, abi.UVERBS_ATTR_DESTROY_QP_RESP
	case abi.IB_USER_VERBS_CMD_DESTROY_SRQ:
		obj, method, hid, rid = abi.UVERBS_OBJECT_SRQ, abi.UVERBS_METHOD_SRQ_DESTROY, abi.UVERBS_ATTR_DESTROY_SRQ_HANDLE, abi.UVERBS_ATTR_DESTROY_SRQ_RESP
	}
	r := kabi.Decode[abi.DestroyCq](w.Req) // destroy_qp and destroy_srq share its layout
	call := abi.NewIoctl(obj, method)
	call.Handle(hid, r.CqHandle)
	call.Out(rid, w.Resp)
	return call, func() {}
}
