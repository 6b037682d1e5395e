package abi

import (
	"reflect"

	"github.com/rdmastack/rdmastack/internal/kabi"
)

// Cmd is a write() command that has a response: its number together with
// the structs the uapi pairs with it (Req is struct ib_uverbs_<cmd>, Resp
// struct ib_uverbs_<cmd>_resp, rdma/ib_user_verbs.h). The one value per
// command below is the only way uverbs builds a WriteCmd, so a request
// sent under the wrong command, or a response read as the wrong struct,
// does not compile. TestCommands checks each value against the header.
type Cmd[Req, Resp any] struct{ Command uint32 }

// Build returns the WriteCmd that sends req and reads the response into
// resp, with the driver's data (either may be nil) after each.
func (c Cmd[Req, Resp]) Build(req *Req, resp *Resp, driverIn, driverOut []byte) *WriteCmd {
	return &WriteCmd{Command: c.Command, Req: kabi.Bytes(req), Resp: kabi.Bytes(resp), DriverIn: driverIn, DriverOut: driverOut}
}

// spec is what TestCommands checks: the number and the structs.
func (c Cmd[Req, Resp]) spec() (uint32, reflect.Type, reflect.Type) {
	return c.Command, reflect.TypeFor[Req](), reflect.TypeFor[Resp]()
}

// CmdNoResp is a write() command the kernel answers with no response
// (DESTROY_AH, MODIFY_QP, ...): Req is its struct ib_uverbs_<cmd>.
type CmdNoResp[Req any] struct{ Command uint32 }

// Build returns the WriteCmd that sends req, with the driver's data
// (may be nil) after it.
func (c CmdNoResp[Req]) Build(req *Req, driverIn []byte) *WriteCmd {
	return &WriteCmd{Command: c.Command, Req: kabi.Bytes(req), DriverIn: driverIn}
}

func (c CmdNoResp[Req]) spec() (uint32, reflect.Type, reflect.Type) {
	return c.Command, reflect.TypeFor[Req](), nil
}

// The write() commands uverbs sends (enum ib_uverbs_write_cmds and, for
// the extended one, its ex_ enum; rdma/ib_user_verbs.h).
var (
	CmdGetContext        = Cmd[GetContext, GetContextResp]{IB_USER_VERBS_CMD_GET_CONTEXT}
	CmdQueryDevice       = Cmd[QueryDevice, QueryDeviceResp]{IB_USER_VERBS_CMD_QUERY_DEVICE}
	CmdExQueryDevice     = Cmd[ExQueryDevice, ExQueryDeviceResp]{IB_USER_VERBS_EX_CMD_QUERY_DEVICE | IB_USER_VERBS_CMD_FLAG_EXTENDED}
	CmdQueryPort         = Cmd[QueryPort, QueryPortResp]{IB_USER_VERBS_CMD_QUERY_PORT}
	CmdAllocPd           = Cmd[AllocPd, AllocPdResp]{IB_USER_VERBS_CMD_ALLOC_PD}
	CmdDeallocPd         = CmdNoResp[DeallocPd]{IB_USER_VERBS_CMD_DEALLOC_PD}
	CmdCreateAh          = Cmd[CreateAh, CreateAhResp]{IB_USER_VERBS_CMD_CREATE_AH}
	CmdDestroyAh         = CmdNoResp[DestroyAh]{IB_USER_VERBS_CMD_DESTROY_AH}
	CmdRegMr             = Cmd[RegMr, RegMrResp]{IB_USER_VERBS_CMD_REG_MR}
	CmdReregMr           = Cmd[ReregMr, ReregMrResp]{IB_USER_VERBS_CMD_REREG_MR}
	CmdDeregMr           = CmdNoResp[DeregMr]{IB_USER_VERBS_CMD_DEREG_MR}
	CmdAllocMw           = Cmd[AllocMw, AllocMwResp]{IB_USER_VERBS_CMD_ALLOC_MW}
	CmdDeallocMw         = CmdNoResp[DeallocMw]{IB_USER_VERBS_CMD_DEALLOC_MW}
	CmdCreateCompChannel = Cmd[CreateCompChannel, CreateCompChannelResp]{IB_USER_VERBS_CMD_CREATE_COMP_CHANNEL}
	CmdCreateCq          = Cmd[CreateCq, CreateCqResp]{IB_USER_VERBS_CMD_CREATE_CQ}
	CmdResizeCq          = Cmd[ResizeCq, ResizeCqResp]{IB_USER_VERBS_CMD_RESIZE_CQ}
	CmdDestroyCq         = Cmd[DestroyCq, DestroyCqResp]{IB_USER_VERBS_CMD_DESTROY_CQ}
	CmdCreateQp          = Cmd[CreateQp, CreateQpResp]{IB_USER_VERBS_CMD_CREATE_QP}
	CmdQueryQp           = Cmd[QueryQp, QueryQpResp]{IB_USER_VERBS_CMD_QUERY_QP}
	CmdModifyQp          = CmdNoResp[ModifyQp]{IB_USER_VERBS_CMD_MODIFY_QP}
	CmdDestroyQp         = Cmd[DestroyQp, DestroyQpResp]{IB_USER_VERBS_CMD_DESTROY_QP}
	CmdAttachMcast       = CmdNoResp[AttachMcast]{IB_USER_VERBS_CMD_ATTACH_MCAST}
	CmdDetachMcast       = CmdNoResp[DetachMcast]{IB_USER_VERBS_CMD_DETACH_MCAST}
	CmdCreateSrq         = Cmd[CreateSrq, CreateSrqResp]{IB_USER_VERBS_CMD_CREATE_SRQ}
	CmdModifySrq         = CmdNoResp[ModifySrq]{IB_USER_VERBS_CMD_MODIFY_SRQ}
	CmdQuerySrq          = Cmd[QuerySrq, QuerySrqResp]{IB_USER_VERBS_CMD_QUERY_SRQ}
	CmdDestroySrq        = Cmd[DestroySrq, DestroySrqResp]{IB_USER_VERBS_CMD_DESTROY_SRQ}
)
