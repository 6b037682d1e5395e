package uverbs

import (
	"fmt"
	"net"
	"unsafe"

	"golang.org/x/sys/unix"

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

// cmdPage is a page outside the Go heap for a hot-path command and the
// response the kernel writes.
type cmdPage struct{ mem []byte }

func newCmdPage() (cmdPage, error) {
	mem, err := unix.Mmap(-1, 0, unix.Getpagesize(), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_ANON|unix.MAP_PRIVATE)
	if err != nil {
		return cmdPage{}, fmt.Errorf("command page: %w", err)
	}
	return cmdPage{mem}, nil
}

func (p *cmdPage) free() {
	if p.mem != nil {
		unix.Munmap(p.mem)
		p.mem = nil
	}
}

// postSendDoorbell lays out POST_SEND with no work requests for the QP
// handle, its response at offset 64 of the page; it returns the command.
func (p *cmdPage) postSendDoorbell(qpHandle uint32) []byte {
	const hdrLen, reqLen = 8, int(unsafe.Sizeof(abi.PostSend{}))
	respLen := int(unsafe.Sizeof(abi.PostSendResp{}))
	*(*abi.CmdHdr)(unsafe.Pointer(&p.mem[0])) = abi.CmdHdr{Command: abi.IB_USER_VERBS_CMD_POST_SEND,
		InWords: uint16((hdrLen + reqLen) / 4), OutWords: uint16(respLen / 4)}
	*(*abi.PostSend)(unsafe.Pointer(&p.mem[hdrLen])) = abi.PostSend{
		Response: uint64(uintptr(unsafe.Pointer(&p.mem[64]))), QpHandle: qpHandle, WqeSize: abi.SizeofUverbsSendWr}
	return p.mem[:hdrLen+reqLen]
}

// reqNotify lays out REQ_NOTIFY_CQ at offset off of the page.
func (p *cmdPage) reqNotify(off int, cqHandle uint32, solicited bool) []byte {
	const hdrLen, reqLen = 8, int(unsafe.Sizeof(abi.ReqNotifyCq{}))
	*(*abi.CmdHdr)(unsafe.Pointer(&p.mem[off])) = abi.CmdHdr{Command: abi.IB_USER_VERBS_CMD_REQ_NOTIFY_CQ,
		InWords: uint16((hdrLen + reqLen) / 4)}
	var s uint32
	if solicited {
		s = 1
	}
	*(*abi.ReqNotifyCq)(unsafe.Pointer(&p.mem[off+hdrLen])) = abi.ReqNotifyCq{CqHandle: cqHandle, SolicitedOnly: s}
	return p.mem[off : off+hdrLen+reqLen]
}
