package uverbs

import (
	"fmt"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/rdmastack/rdmastack/uverbs/internal/abi"
)

// The doorbells' command pages, for every provider whose data path rings
// the kernel with a write() command (rxe and siw: POST_SEND without work
// requests; rxe: REQ_NOTIFY_CQ).

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
