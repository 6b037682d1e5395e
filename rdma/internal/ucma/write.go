package ucma

import (
	"fmt"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/rdmastack/rdmastack/internal/kabi"
)

const hdrLen = int(unsafe.Sizeof(CmdHdr{}))

// Write sends one command: the header, then req (a command struct's
// bytes). When resp is not nil, the kernel writes the response into
// memory of package kabi, pinned for the call, that starts as a copy of
// resp (so that what an older kernel's shorter struct leaves out keeps
// the caller's value) and is copied back to it; respOff is the offset of
// the command's u64 response field in req, where its address goes. The
// write may sleep in the kernel (DESTROY_ID waits for running handlers),
// so it goes through the scheduler. The error is the bare errno, a
// framing error matching unix.EINVAL or unix.E2BIG, or a short write
// matching io.ErrShortWrite; callers name the operation.
func Write(fd int, cmd uint32, req []byte, respOff int, resp []byte) error {
	return write(fd, cmd, req, respOff, resp, true)
}

// WriteIn sends one command whose pointer field at ptrOff in req points
// at data, which the kernel reads (SET_OPTION's optval): data is copied
// into kabi's pinned memory for the call, and the field points there.
func WriteIn(fd int, cmd uint32, req []byte, ptrOff int, data []byte) error {
	return write(fd, cmd, req, ptrOff, data, false)
}

func write(fd int, cmd uint32, req []byte, ptrOff int, buf []byte, out bool) error {
	if len(req) > 0xffff || len(buf) > 0xffff {
		return fmt.Errorf("command %d of %d bytes with %d bytes behind its pointer: %w", cmd, len(req), len(buf), unix.E2BIG)
	}
	if buf != nil && (ptrOff < 0 || ptrOff+8 > len(req)) {
		return fmt.Errorf("command %d: pointer field at %d of a %d-byte request: %w", cmd, ptrOff, len(req), unix.EINVAL)
	}
	m := kabi.NewMsg(hdrLen+len(req), len(buf))
	h := CmdHdr{Cmd: cmd, In: uint16(len(req))}
	if out {
		h.Out = uint16(len(buf))
	}
	copy(m.Buf(), buf)
	frame := m.Frame()
	copy(frame, kabi.Bytes(&h))
	copy(frame[hdrLen:], req)
	var err error
	if buf != nil {
		err = m.Send(fd, kabi.Ptr{At: hdrLen + ptrOff})
	} else {
		err = m.Send(fd)
	}
	if err == nil && out {
		copy(buf, m.Buf())
	}
	return err
}
