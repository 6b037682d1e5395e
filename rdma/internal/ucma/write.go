package ucma

import (
	"runtime"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Write sends one command: the header, then req (a command struct's
// bytes). When resp is not nil, the kernel writes the response there:
// respOff is the offset of the command's u64 response field in req. The
// frame and the response buffer are one heap allocation, which the GC
// keeps alive until the write returns. The write may sleep in the kernel
// (DESTROY_ID waits for running handlers), so it goes through the
// scheduler; EINTR is retried.
func Write(fd int, cmd uint32, req []byte, respOff int, resp []byte) error {
	return write(fd, cmd, req, respOff, resp, true)
}

// WriteIn sends one command whose pointer field at ptrOff in req points
// at data, which the kernel reads (SET_OPTION's optval). Like Write, the
// frame and data are one heap allocation alive across the write.
func WriteIn(fd int, cmd uint32, req []byte, ptrOff int, data []byte) error {
	return write(fd, cmd, req, ptrOff, data, false)
}

func write(fd int, cmd uint32, req []byte, ptrOff int, buf []byte, out bool) error {
	const hdr = int(unsafe.Sizeof(CmdHdr{}))
	in := hdr + len(req)
	frame := make([]byte, in+len(buf))
	h := CmdHdr{Cmd: cmd, In: uint16(len(req))}
	if out {
		h.Out = uint16(len(buf))
	}
	*(*CmdHdr)(unsafe.Pointer(&frame[0])) = h
	copy(frame[hdr:], req)
	if buf != nil {
		copy(frame[in:], buf)
		*(*uint64)(unsafe.Pointer(&frame[hdr+ptrOff])) = uint64(uintptr(unsafe.Pointer(&frame[in])))
	}
	for {
		n, err := unix.Write(fd, frame[:in])
		if err == unix.EINTR {
			continue
		}
		runtime.KeepAlive(frame)
		if err != nil {
			return err
		}
		if n != in {
			return unix.EIO
		}
		if out {
			copy(buf, frame[in:])
		}
		return nil
	}
}

// EventBuf is GET_EVENT's frame and response, made once per channel so
// that fetching an event does not allocate. Its owner keeps it alive; the
// frame holds the address of Resp.
type EventBuf struct {
	frame [16]byte // CmdHdr + struct rdma_ucm_get_event
	Resp  EventResp
}

// NewEventBuf returns a GET_EVENT frame pointing at its own Resp.
func NewEventBuf() *EventBuf {
	b := new(EventBuf)
	*(*CmdHdr)(unsafe.Pointer(&b.frame[0])) = CmdHdr{Cmd: RDMA_USER_CM_CMD_GET_EVENT,
		In: uint16(unsafe.Sizeof(GetEvent{})), Out: uint16(unsafe.Sizeof(EventResp{}))}
	*(*uint64)(unsafe.Pointer(&b.frame[8])) = uint64(uintptr(unsafe.Pointer(&b.Resp)))
	return b
}

// Fetch writes GET_EVENT to fd, which must be non-blocking, so that it
// does not wait for an event; it may still sleep on the file's mutex, so
// it goes through the scheduler's system-call path. It returns 0 when
// an event is in Resp, EAGAIN when none is queued, else the errno (EINTR
// retried).
func (b *EventBuf) Fetch(fd uintptr) unix.Errno {
	for {
		_, _, e := unix.Syscall(unix.SYS_WRITE, fd, uintptr(unsafe.Pointer(&b.frame[0])), uintptr(len(b.frame)))
		if e != unix.EINTR {
			runtime.KeepAlive(b)
			return e
		}
	}
}
