package abi

import (
	"fmt"
	"runtime"
	"unsafe"

	"golang.org/x/sys/unix"
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

// frame lays the command out as write() sends it, with the response
// pointer set to out.
func (w *WriteCmd) frame(out uint64) ([]byte, error) {
	hdrLen := int(unsafe.Sizeof(CmdHdr{}))
	if w.Extended() {
		exLen := int(unsafe.Sizeof(ExCmdHdr{}))
		for _, b := range [][]byte{w.Req, w.DriverIn, w.Resp, w.DriverOut} {
			if len(b)%8 != 0 {
				return nil, fmt.Errorf("extended command %#x: a length of %d is not a multiple of 8: %w", w.Command, len(b), unix.EINVAL)
			}
		}
		words := []int{len(w.Req) / 8, len(w.Resp) / 8, len(w.DriverIn) / 8, len(w.DriverOut) / 8}
		for _, n := range words {
			if n > 0xffff {
				return nil, fmt.Errorf("extended command %#x too long: %w", w.Command, unix.E2BIG)
			}
		}
		buf := make([]byte, hdrLen+exLen+len(w.Req)+len(w.DriverIn))
		*(*CmdHdr)(unsafe.Pointer(&buf[0])) = CmdHdr{Command: w.Command, InWords: uint16(words[0]), OutWords: uint16(words[1])}
		*(*ExCmdHdr)(unsafe.Pointer(&buf[hdrLen])) = ExCmdHdr{Response: out, ProviderInWords: uint16(words[2]), ProviderOutWords: uint16(words[3])}
		n := copy(buf[hdrLen+exLen:], w.Req)
		copy(buf[hdrLen+exLen+n:], w.DriverIn)
		return buf, nil
	}
	in := hdrLen + len(w.Req) + len(w.DriverIn)
	outLen := len(w.Resp) + len(w.DriverOut)
	if in%4 != 0 || outLen%4 != 0 {
		return nil, fmt.Errorf("command %d: lengths %d and %d are not multiples of 4: %w", w.Command, in, outLen, unix.EINVAL)
	}
	if in/4 > 0xffff || outLen/4 > 0xffff {
		return nil, fmt.Errorf("command %d too long: %w", w.Command, unix.E2BIG)
	}
	if w.Resp != nil && len(w.Req) < 8 {
		return nil, fmt.Errorf("command %d has a response but no response slot: %w", w.Command, unix.EINVAL)
	}
	buf := make([]byte, in)
	*(*CmdHdr)(unsafe.Pointer(&buf[0])) = CmdHdr{Command: w.Command, InWords: uint16(in / 4), OutWords: uint16(outLen / 4)}
	n := copy(buf[hdrLen:], w.Req)
	copy(buf[hdrLen+n:], w.DriverIn)
	if w.Resp != nil {
		*(*uint64)(unsafe.Pointer(&buf[hdrLen])) = out
	}
	return buf, nil
}

// Encoded returns the bytes write() would send, with the response pointer
// replaced by resp; it exists for tests.
func (w *WriteCmd) Encoded(resp uint64) ([]byte, error) { return w.frame(resp) }

// Write sends the command on fd: the one place uverbs write() calls are
// made. The core response and the driver's response share one buffer, as
// the kernel requires, and are copied back into Resp and DriverOut. EINTR
// is retried. The error is the bare unix.Errno; callers add the operation.
func Write(fd int, w *WriteCmd) error {
	var out []byte
	var outPtr uint64
	var pinner runtime.Pinner
	defer pinner.Unpin()
	if n := len(w.Resp) + len(w.DriverOut); n > 0 {
		out = make([]byte, n)
		p := unsafe.Pointer(unsafe.SliceData(out))
		pinner.Pin(p)
		outPtr = uint64(uintptr(p))
	}
	buf, err := w.frame(outPtr)
	if err != nil {
		return err
	}
	for {
		var n int
		n, err = unix.Write(fd, buf)
		if err == unix.EINTR {
			continue
		}
		if err == nil && n != len(buf) {
			err = fmt.Errorf("write of %d bytes returned %d: %w", len(buf), n, unix.EPROTO)
		}
		break
	}
	runtime.KeepAlive(out)
	runtime.KeepAlive(buf)
	if err != nil {
		return err
	}
	n := copy(w.Resp, out)
	copy(w.DriverOut, out[n:])
	return nil
}
