package uverbs

import (
	"fmt"
	"sync"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/rdmastack/rdmastack/uverbs/internal/abi"
)

// The doorbells' command slots, for every provider whose data path rings
// the kernel with a write() command (rxe and siw: POST_SEND without work
// requests; rxe: REQ_NOTIFY_CQ).

// cmdPage is a command slot: cmdSlot bytes outside the Go heap for a
// hot-path command and the response the kernel writes, carved from pages
// the process maps once and shares among its CQs and QPs (a page a CQ or
// QP cost an mmap and an munmap each, three a connection, where
// rdma-core's providers map nothing of the kind). A slot is zeroed when
// taken and goes back to the pool when its CQ or QP is released; the
// pages stay mapped for the process's life (one 4 KiB page for every 32
// CQs and QPs alive at the peak).
type cmdPage struct{ mem []byte }

// cmdSlot is one slot's size: REQ_NOTIFY_CQ's two commands (at 0 and 64)
// or POST_SEND's (at 0, its response at 64), each within 64 bytes.
const cmdSlot = 128

// cmdPool holds the free slots.
var cmdPool struct {
	mu   sync.Mutex
	free [][]byte
}

func newCmdPage() (cmdPage, error) {
	cmdPool.mu.Lock()
	defer cmdPool.mu.Unlock()
	if len(cmdPool.free) == 0 {
		mem, err := unix.Mmap(-1, 0, unix.Getpagesize(), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_ANON|unix.MAP_PRIVATE)
		if err != nil {
			return cmdPage{}, fmt.Errorf("command page: %w", err)
		}
		for off := len(mem) - cmdSlot; off >= 0; off -= cmdSlot {
			cmdPool.free = append(cmdPool.free, mem[off:off+cmdSlot:off+cmdSlot])
		}
	}
	n := len(cmdPool.free) - 1
	mem := cmdPool.free[n]
	cmdPool.free[n] = nil
	cmdPool.free = cmdPool.free[:n]
	clear(mem)
	return cmdPage{mem}, nil
}

// free gives the slot back; the CQ or QP must not ring through it again.
func (p *cmdPage) free() {
	if p.mem == nil {
		return
	}
	cmdPool.mu.Lock()
	cmdPool.free = append(cmdPool.free, p.mem)
	cmdPool.mu.Unlock()
	p.mem = nil
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
