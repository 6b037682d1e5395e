package abi

import (
	"encoding/binary"
	"fmt"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/rdmastack/rdmastack/internal/kabi"
)

// WriteCmd is one command of the write() interface.
//
// For a plain command Req is the core request; when the command has a
// response (Resp is non-nil) Req starts with the 8-byte response slot,
// which the framing fills with the address of the response buffer. For an
// extended command (Command has IB_USER_VERBS_CMD_FLAG_EXTENDED) Req is
// the request that follows struct ib_uverbs_ex_cmd_hdr, and every length
// must be a multiple of 8.
//
// DriverIn follows the core request; DriverOut follows the core response
// in the buffer the kernel writes, and gets its share of it back.
type WriteCmd struct {
	Command   uint32
	Req       []byte
	DriverIn  []byte
	Resp      []byte
	DriverOut []byte
}

// Extended reports whether the command uses the extended framing.
func (w *WriteCmd) Extended() bool { return w.Command&IB_USER_VERBS_CMD_FLAG_EXTENDED != 0 }

// layout checks the command's lengths against its framing and returns
// the length of its frame and of its response (core and driver).
func (w *WriteCmd) layout() (frame, out int, err error) {
	hdrLen := int(unsafe.Sizeof(CmdHdr{}))
	out = len(w.Resp) + len(w.DriverOut)
	if w.Extended() {
		for _, b := range [][]byte{w.Req, w.DriverIn, w.Resp, w.DriverOut} {
			if len(b)%8 != 0 {
				return 0, 0, fmt.Errorf("extended command %#x: a length of %d is not a multiple of 8: %w", w.Command, len(b), unix.EINVAL)
			}
			if len(b)/8 > 0xffff {
				return 0, 0, fmt.Errorf("extended command %#x too long: %w", w.Command, unix.E2BIG)
			}
		}
		return hdrLen + int(unsafe.Sizeof(ExCmdHdr{})) + len(w.Req) + len(w.DriverIn), out, nil
	}
	in := hdrLen + len(w.Req) + len(w.DriverIn)
	if in%4 != 0 || out%4 != 0 {
		return 0, 0, fmt.Errorf("command %d: lengths %d and %d are not multiples of 4: %w", w.Command, in, out, unix.EINVAL)
	}
	if in/4 > 0xffff || out/4 > 0xffff {
		return 0, 0, fmt.Errorf("command %d too long: %w", w.Command, unix.E2BIG)
	}
	if w.Resp != nil && len(w.Req) < 8 {
		return 0, 0, fmt.Errorf("command %d has a response but no response slot: %w", w.Command, unix.EINVAL)
	}
	return in, out, nil
}

// fill lays the command out in frame (of the length layout returned) as
// write() sends it, with resp in the response field. Both framings put
// that field at offset 8: the extended header's response, or the
// response slot that starts a plain command's request.
func (w *WriteCmd) fill(frame []byte, resp uint64) {
	hdrLen := int(unsafe.Sizeof(CmdHdr{}))
	if w.Extended() {
		exLen := int(unsafe.Sizeof(ExCmdHdr{}))
		h := CmdHdr{Command: w.Command, InWords: uint16(len(w.Req) / 8), OutWords: uint16(len(w.Resp) / 8)}
		ex := ExCmdHdr{Response: resp, ProviderInWords: uint16(len(w.DriverIn) / 8), ProviderOutWords: uint16(len(w.DriverOut) / 8)}
		copy(frame, kabi.Bytes(&h))
		copy(frame[hdrLen:], kabi.Bytes(&ex))
		n := copy(frame[hdrLen+exLen:], w.Req)
		copy(frame[hdrLen+exLen+n:], w.DriverIn)
		return
	}
	h := CmdHdr{Command: w.Command, InWords: uint16(len(frame) / 4), OutWords: uint16((len(w.Resp) + len(w.DriverOut)) / 4)}
	copy(frame, kabi.Bytes(&h))
	n := copy(frame[hdrLen:], w.Req)
	copy(frame[hdrLen+n:], w.DriverIn)
	if w.Resp != nil {
		binary.NativeEndian.PutUint64(frame[hdrLen:], resp)
	}
}

// respField is the frame offset of the response field (see fill).
const respField = 8

// Encoded returns the bytes write() would send, with the response pointer
// replaced by resp; it exists for tests.
func (w *WriteCmd) Encoded(resp uint64) ([]byte, error) {
	n, _, err := w.layout()
	if err != nil {
		return nil, err
	}
	b := make([]byte, n)
	w.fill(b, resp)
	return b, nil
}

// Write sends the command on fd: the one place uverbs write() calls are
// made, through package kabi. The frame and the response buffer are
// kabi's, pinned for the call; the core response and the driver's share
// that one buffer, as the kernel requires, and are copied back into Resp
// and DriverOut. EINTR is retried. The error is the bare unix.Errno (or a
// framing error, or one matching io.ErrShortWrite); callers add the
// operation.
func Write(fd int, w *WriteCmd) error {
	frameLen, outLen, err := w.layout()
	if err != nil {
		return err
	}
	m := kabi.NewMsg(frameLen, outLen)
	w.fill(m.Frame(), 0)
	if outLen > 0 && (w.Resp != nil || w.Extended()) {
		err = m.Send(fd, kabi.Ptr{At: respField})
	} else {
		err = m.Send(fd)
	}
	if err != nil {
		return err
	}
	n := copy(w.Resp, m.Buf())
	copy(w.DriverOut, m.Buf()[n:])
	return nil
}
