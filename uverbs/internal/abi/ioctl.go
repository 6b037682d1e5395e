package abi

import (
	"fmt"
	"runtime"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/rdmastack/rdmastack/internal/kabi"
)

// MaxAttrs is the most attributes one Ioctl holds. The largest method
// rdmastack sends (CQ or QP creation with driver data) needs 16.
const MaxAttrs = 24

// ioctlBuf is the memory RDMA_VERBS_IOCTL points at: the header directly
// followed by the attribute array, which the kernel also writes (handles,
// fds and VALID_OUTPUT flags).
type ioctlBuf struct {
	Hdr   IoctlHdr
	Attrs [MaxAttrs]Attr
}

// Ioctl builds one RDMA_VERBS_IOCTL call: the object and method, then one
// attribute per call of its builder methods, in order. Every attribute is
// mandatory unless Optional follows it, as in rdma-core. The caller's
// buffers are kept reachable from the call, and pinned through kabi.Pins
// only inside Do, around the syscall, with the attribute array the kernel
// writes back: every address the call gives the kernel comes from that
// Pin. A call built but never issued (the context closed meanwhile)
// leaves nothing pinned. An Ioctl is used once.
type Ioctl struct {
	buf  *ioctlBuf
	n    int
	bufs [MaxAttrs][]byte // the caller's buffer behind each pointer attribute
	pins kabi.Pins
	err  error
}

// NewIoctl starts a call of method on object.
func NewIoctl(object, method uint16) *Ioctl {
	return &Ioctl{buf: &ioctlBuf{Hdr: IoctlHdr{ObjectID: object, MethodID: method}}}
}

// next appends an attribute and returns its index, or -1 when full.
func (c *Ioctl) next(id uint16) int {
	if c.n == MaxAttrs {
		if c.err == nil {
			c.err = fmt.Errorf("more than %d ioctl attributes: %w", MaxAttrs, unix.E2BIG)
		}
		return -1
	}
	i := c.n
	c.n++
	c.buf.Attrs[i] = Attr{AttrID: id, Flags: UVERBS_ATTR_F_MANDATORY}
	return i
}

// pointer records b as attribute i's buffer, with its address for
// Encoded; Do pins it and stores the address again, from the pin.
func (c *Ioctl) pointer(i int, b []byte) {
	if len(b) > 0xffff {
		if c.err == nil {
			c.err = fmt.Errorf("attribute %d: %d bytes exceed the 65535 an attribute can carry: %w",
				c.buf.Attrs[i].AttrID, len(b), unix.E2BIG)
		}
		return
	}
	c.buf.Attrs[i].Len = uint16(len(b))
	if len(b) == 0 {
		return
	}
	c.bufs[i] = b
	c.buf.Attrs[i].Data = uint64(uintptr(unsafe.Pointer(unsafe.SliceData(b))))
}

// pin pins every buffer of the call, and the header and attributes, and
// stores each buffer's address in its attribute.
func (c *Ioctl) pin() {
	for i, b := range c.bufs[:c.n] {
		if len(b) > 0 {
			c.buf.Attrs[i].Data = c.pins.Pin(b)
		}
	}
	c.pins.Pin(kabi.Bytes(c.buf))
}

// inline copies b (at most 8 bytes) into attribute i's data field.
func (c *Ioctl) inline(i int, b []byte) {
	c.buf.Attrs[i].Len = uint16(len(b))
	copy((*[8]byte)(unsafe.Pointer(&c.buf.Attrs[i].Data))[:], b)
}

// In adds a PTR_IN attribute: payloads of up to 8 bytes travel inline in
// the data field, longer ones by pointer.
func (c *Ioctl) In(id uint16, b []byte) int {
	i := c.next(id)
	if i < 0 {
		return i
	}
	if len(b) <= 8 {
		c.inline(i, b)
	} else {
		c.pointer(i, b)
	}
	return i
}

// InU32 adds a 4-byte PTR_IN (or FLAGS_IN) attribute.
func (c *Ioctl) InU32(id uint16, v uint32) int {
	return c.In(id, kabi.Bytes(&v))
}

// InU64 adds an 8-byte PTR_IN (or FLAGS_IN) attribute.
func (c *Ioctl) InU64(id uint16, v uint64) int {
	return c.In(id, kabi.Bytes(&v))
}

// Const adds a CONST_IN attribute: 8 bytes, the value in data (the kernel
// reads it as s64 and range-checks it against its own type).
func (c *Ioctl) Const(id uint16, v uint64) int {
	i := c.next(id)
	if i >= 0 {
		c.buf.Attrs[i].Len = 8
		c.buf.Attrs[i].Data = v
	}
	return i
}

// Enum adds an ENUM_IN attribute: elem selects the variant, b is its
// payload (inline up to 8 bytes).
func (c *Ioctl) Enum(id uint16, elem uint8, b []byte) int {
	i := c.In(id, b)
	if i >= 0 {
		*(*[2]byte)(unsafe.Pointer(&c.buf.Attrs[i].AttrData)) = [2]byte{elem, 0}
	}
	return i
}

// Out adds a PTR_OUT attribute; its data is always a pointer, whatever
// the length. Valid reports afterwards whether the kernel wrote it.
func (c *Ioctl) Out(id uint16, b []byte) int {
	i := c.next(id)
	if i >= 0 {
		c.pointer(i, b)
	}
	return i
}

// Handle adds an IDR attribute naming an existing object.
func (c *Ioctl) Handle(id uint16, h uint32) int {
	i := c.next(id)
	if i >= 0 {
		c.buf.Attrs[i].Data = uint64(h)
	}
	return i
}

// NewHandle adds an IDR attribute of access NEW; Data returns the handle
// after Do.
func (c *Ioctl) NewHandle(id uint16) int { return c.next(id) }

// FD adds an FD attribute naming an existing file descriptor.
func (c *Ioctl) FD(id uint16, fd int32) int {
	i := c.next(id)
	if i >= 0 {
		c.buf.Attrs[i].Data = uint64(int64(fd))
	}
	return i
}

// NewFD adds an FD attribute of access NEW; Data returns the fd after Do.
func (c *Ioctl) NewFD(id uint16) int { return c.next(id) }

// UHWIn adds the driver's input data (UVERBS_ATTR_UHW_IN), if any.
func (c *Ioctl) UHWIn(b []byte) {
	if len(b) > 0 {
		c.In(UVERBS_ATTR_UHW_IN, b)
	}
}

// UHWOut adds the driver's output buffer (UVERBS_ATTR_UHW_OUT), if any.
func (c *Ioctl) UHWOut(b []byte) {
	if len(b) > 0 {
		c.Out(UVERBS_ATTR_UHW_OUT, b)
	}
}

// Optional clears the mandatory flag of the last attribute: a kernel that
// does not know it then ignores it instead of failing with
// EPROTONOSUPPORT.
func (c *Ioctl) Optional() {
	if c.n > 0 {
		c.buf.Attrs[c.n-1].Flags &^= UVERBS_ATTR_F_MANDATORY
	}
}

// Data is attribute i's data field as the kernel left it: the new handle
// or fd of NewHandle and NewFD attributes.
func (c *Ioctl) Data(i int) uint64 {
	if i < 0 || i >= c.n {
		return 0
	}
	return c.buf.Attrs[i].Data
}

// Valid reports whether the kernel wrote output attribute i.
func (c *Ioctl) Valid(i int) bool {
	return i >= 0 && i < c.n && c.buf.Attrs[i].Flags&UVERBS_ATTR_F_VALID_OUTPUT != 0
}

// Encoded returns the header and attributes as the kernel will read them
// for driver; it is what Do passes and exists for tests.
func (c *Ioctl) Encoded(driver uint32) []byte {
	c.finish(driver)
	b := kabi.Bytes(c.buf)
	return b[:int(c.buf.Hdr.Length)]
}

func (c *Ioctl) finish(driver uint32) {
	c.buf.Hdr.NumAttrs = uint16(c.n)
	c.buf.Hdr.Length = uint16(unsafe.Sizeof(IoctlHdr{}) + uintptr(c.n)*unsafe.Sizeof(Attr{}))
	c.buf.Hdr.DriverID = driver
}

// Do issues the call on fd, with driver as the header's driver id. It is
// the one place RDMA_VERBS_IOCTL is made. EINTR is retried. The error is
// the bare unix.Errno (or a build error matching unix.E2BIG); callers add
// the operation.
func (c *Ioctl) Do(fd int, driver uint32) error {
	if c.err != nil {
		return c.err
	}
	defer c.pins.Unpin()
	c.pin()
	c.finish(driver)
	var err error
	for {
		_, _, e := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), RDMA_VERBS_IOCTL, uintptr(unsafe.Pointer(c.buf)))
		if e == unix.EINTR {
			continue
		}
		if e != 0 {
			err = e
		}
		break
	}
	runtime.KeepAlive(c)
	return err
}

// Len is the number of attributes.
func (c *Ioctl) Len() int { return c.n }

// Object and Method are the call's object and method ids.
func (c *Ioctl) Object() uint16 { return c.buf.Hdr.ObjectID }

// Method is the call's method id.
func (c *Ioctl) Method() uint16 { return c.buf.Hdr.MethodID }

// Attr returns attribute i as it stands.
func (c *Ioctl) Attr(i int) Attr { return c.buf.Attrs[i] }

// Find returns the index of the attribute with id, or -1.
func (c *Ioctl) Find(id uint16) int {
	for i := 0; i < c.n; i++ {
		if c.buf.Attrs[i].AttrID == id {
			return i
		}
	}
	return -1
}

// Buf returns the caller's buffer behind pointer attribute i (nil for
// inline and handle attributes). Fakes of the kernel write outputs there.
func (c *Ioctl) Buf(i int) []byte {
	if i < 0 || i >= c.n {
		return nil
	}
	return c.bufs[i]
}

// SetOutput does what the kernel does for output attribute i: it marks it
// VALID_OUTPUT. For fakes of the kernel.
func (c *Ioctl) SetOutput(i int) { c.buf.Attrs[i].Flags |= UVERBS_ATTR_F_VALID_OUTPUT }

// SetData does what the kernel does for NEW handles and fds: it writes
// attribute i's data field. For fakes of the kernel.
func (c *Ioctl) SetData(i int, v uint64) { c.buf.Attrs[i].Data = v }
