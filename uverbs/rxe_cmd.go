package uverbs

import (
	"net"

	"github.com/rdmastack/rdmastack/internal/kabi"
	"github.com/rdmastack/rdmastack/uverbs/internal/abi"
)

// rxeProvider is the Soft-RoCE data path: the queues the kernel's rxe
// driver shares with user space, worked directly, as rdma-core's librxe
// does. Work requests are written into the send and receive queues and
// published with a release store of the producer index; completions are
// read from the CQ after an acquire load of its producer index (the
// kernel's smp_store_release/smp_load_acquire on struct rxe_queue_buf).
// Posting a send rings the doorbell, a POST_SEND write() command carrying
// the QP handle and no work requests; receives need none.
type rxeProvider struct{}

func (rxeProvider) udata() driverUdata {
	return driverUdata{
		createCQOut:  kabi.Sizeof[abi.RxeCreateCqResp](),
		createQPOut:  kabi.Sizeof[abi.RxeCreateQpResp](),
		createSRQOut: kabi.Sizeof[abi.RxeCreateSrqResp](),
		createAHOut:  kabi.Sizeof[abi.RxeCreateAhResp](),
		// struct rxe_resize_cq_resp: where the resized queue is mapped.
		resizeCQOut: kabi.Sizeof[abi.RxeResizeCqResp](),
	}
}

// modifySRQ is struct rxe_modify_srq_cmd, which rxe needs always: it
// writes a resized queue's struct mminfo to the address it holds, memory
// pinned through kabi for the call, on the write() and the ioctl path
// alike (libibverbs' rxe provider uses a stack variable).
func (rxeProvider) modifySRQ(pins *kabi.Pins) ([]byte, *abi.MmInfo) {
	mi := new(abi.MmInfo)
	cmd := abi.RxeModifySrqCmd{MmapInfoAddr: pins.Pin(kabi.Bytes(mi))}
	return kabi.Bytes(&cmd), mi
}

func (rxeProvider) ahMAC([]byte) net.HardwareAddr { return nil }
func (rxeProvider) refuseQueues(string) error     { return nil }
func (rxeProvider) hasDataPath() bool             { return true }

func (rxeProvider) traits() traits      { return traits{} }
func (rxeProvider) open(*Context) error { return nil }
func (rxeProvider) close() error        { return nil }

func (p rxeProvider) prepareCQ(*CQAttr) (driverIO, error) { return sized(p.udata().createCQOut), nil }
func (p rxeProvider) prepareQP(*QPInit) (driverIO, error) { return sized(p.udata().createQPOut), nil }
func (p rxeProvider) prepareSRQ(*SRQAttr) (driverIO, error) {
	return sized(p.udata().createSRQOut), nil
}

// srqNum reads struct rxe_create_srq_resp's srq_num.
func (rxeProvider) srqNum(out []byte) uint32 {
	if len(out) < kabi.Sizeof[abi.RxeCreateSrqResp]() {
		return 0
	}
	return kabi.Decode[abi.RxeCreateSrqResp](out).SrqNum
}
