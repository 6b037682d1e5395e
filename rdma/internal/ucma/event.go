package ucma

import (
	"errors"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/rdmastack/rdmastack/internal/kabi"
)

// EventBuf is GET_EVENT's command, made once per channel so that
// fetching an event does not allocate: a kabi message (the frame and the
// buffer the kernel writes the event into, one allocation of kabi's,
// pinned only while each GET_EVENT is in the kernel), and Resp, the last
// event fetched. Nothing stays pinned between fetches, so a channel that
// is dropped without Close leaves nothing behind; the message's memory
// is on the heap, which does not move, and is kept alive by the EventBuf.
type EventBuf struct {
	msg  *kabi.Msg
	Resp EventResp
}

// NewEventBuf returns a GET_EVENT command.
func NewEventBuf() *EventBuf {
	m := kabi.NewMsg(hdrLen+int(unsafe.Sizeof(GetEvent{})), int(unsafe.Sizeof(EventResp{})))
	h := CmdHdr{Cmd: RDMA_USER_CM_CMD_GET_EVENT, In: uint16(unsafe.Sizeof(GetEvent{})), Out: uint16(unsafe.Sizeof(EventResp{}))}
	copy(m.Frame(), kabi.Bytes(&h))
	return &EventBuf{msg: m}
}

// Fetch writes GET_EVENT to fd, which must be non-blocking, so that it
// does not wait for an event; it may still sleep on the file's mutex, so
// it goes through the scheduler's system-call path. It returns 0 when
// an event is in Resp, EAGAIN when none is queued, else the errno (EIO
// for a write the kernel took only part of). One Fetch runs at a time.
func (b *EventBuf) Fetch(fd uintptr) unix.Errno {
	switch err := b.msg.Send(int(fd), kabi.Ptr{At: hdrLen + int(unsafe.Offsetof(GetEvent{}.Response))}).(type) {
	case nil:
		copy(kabi.Bytes(&b.Resp), b.msg.Buf())
		return 0
	case unix.Errno:
		return err
	default:
		var e unix.Errno
		if errors.As(err, &e) {
			return e // EBUSY: a second Fetch meanwhile
		}
		return unix.EIO
	}
}

// ConnParam is the event's param union read as struct rdma_ucm_conn_param.
func (r *EventResp) ConnParam() ConnParam { return kabi.Decode[ConnParam](r.Param[:]) }

// UDParam is the event's param union read as struct rdma_ucm_ud_param.
func (r *EventResp) UDParam() UDParam { return kabi.Decode[UDParam](r.Param[:]) }
