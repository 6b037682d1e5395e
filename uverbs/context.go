package uverbs

import (
	"errors"
	"fmt"
	"os"
	"sync"
	"sync/atomic"

	"golang.org/x/sys/unix"

	"github.com/rdmastack/rdmastack/ib"
	"github.com/rdmastack/rdmastack/internal/ctxshare"
	"github.com/rdmastack/rdmastack/internal/kabi"
	"github.com/rdmastack/rdmastack/internal/waitfd"
	"github.com/rdmastack/rdmastack/uverbs/internal/abi"
)

// Context is an open device: the verbs context (ucontext) the kernel keeps
// for one open of the uverbs char device, with its async event fd. Every
// object created through it dies with it: Close makes the kernel destroy
// them all, and the Go values then report os.ErrClosed.
type Context struct {
	dev    Device
	driver uint32

	mu      sync.RWMutex // held for reading by every command, for writing by Close
	closeMu sync.Mutex   // held across Close, so that a second Close returns when all is undone
	k       kernel
	prov    provider // the driver's, chosen when the context opens (provider.go)
	closed  bool
	shared  atomic.Bool // Close refuses: see ErrShared and Share

	// ioctlOK: the kernel has the ioctl framework; invokeWrite: it runs
	// write() commands through it (UVERBS_METHOD_INVOKE_WRITE).
	ioctlOK, invokeWrite bool

	numCompVectors uint32
	coreSupport    uint64
	events         *waitfd.FD    // the async event fd
	mlx5           *MLX5Context  // what mlx5 reported at GET_CONTEXT; nil for other drivers
	asyncFD        int           // the async event fd from ASYNC_EVENT_ALLOC (ioctl), else -1
	noMethod       atomic.Uint64 // bit n: the kernel lacks the ioctl method of write() command n

	nextHandle uint64
	objects    map[uint64]any            // user_handle -> *QP, *CQ, *SRQ, for async events
	channels   map[*CompChannel]struct{} // closed with the context
}

// Interface says how a context talks to the kernel.
type Interface int

// Interfaces.
const (
	// InterfaceAuto uses RDMA_VERBS_IOCTL where the kernel has it, and
	// write() otherwise, as libibverbs does.
	InterfaceAuto Interface = iota
	// InterfaceWrite uses only the write() commands.
	InterfaceWrite
)

// Open opens dev and creates its verbs context.
func Open(dev Device) (*Context, error) { return OpenWith(dev, InterfaceAuto) }

// OpenName opens the device called name (see DeviceByName).
func OpenName(name string) (*Context, error) {
	dev, err := DeviceByName(name)
	if err != nil {
		return nil, err
	}
	return Open(dev)
}

// OpenWith opens dev using the given kernel interface.
func OpenWith(dev Device, iface Interface) (*Context, error) {
	if dev.Uverbs == "" {
		return nil, invalid(dev.Name, "open", "no uverbs char device")
	}
	fd, err := unix.Open(dev.Path(), unix.O_RDWR|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, wrap(dev.Name, "open "+dev.Path(), err)
	}
	c, err := newContext(dev, fdKernel{fd}, iface)
	if err != nil {
		unix.Close(fd)
		return nil, err
	}
	return c, nil
}

// newContext runs GET_CONTEXT on an open char device.
func newContext(dev Device, k kernel, iface Interface) (*Context, error) {
	c := &Context{dev: dev, driver: uint32(dev.DriverID), k: k, prov: providerFor(dev.DriverID), objects: map[uint64]any{}, asyncFD: -1}
	if err := c.openContext(iface); err != nil {
		return nil, err
	}
	if err := c.prov.open(c); err != nil {
		c.close()
		return nil, err
	}
	return c, nil
}

// openContext runs GET_CONTEXT with the driver's data.
func (c *Context) openContext(iface Interface) error {
	drv := c.prov.udata()
	if c.dev.DriverID != ib.DriverMLX5 {
		return c.getContext(iface, drv.getContextIn, make([]byte, drv.getContextOut))
	}
	// mlx5 requires a request; like libmlx5, retry shorter and
	// DEVX-less forms of it when the kernel refuses one.
	var err error
	for _, a := range mlx5GetContextAttempts(os.Getpagesize()) {
		out := make([]byte, kabi.Sizeof[abi.Mlx5IbAllocUcontextResp]())
		if err = c.getContext(iface, a.bytes(), out); err == nil {
			c.mlx5 = decodeMLX5Context(&a, out)
			return nil
		}
		if c.ioctlOK {
			return err // the context exists; only the async fd failed
		}
	}
	return err
}

// getContext runs GET_CONTEXT with the driver's data, through ioctl where
// the kernel has it (then allocating the async event fd) and else through
// write().
func (c *Context) getContext(iface Interface, drvIn, drvOut []byte) error {
	if iface == InterfaceAuto {
		err := c.getContextIoctl(drvIn, drvOut)
		switch {
		case err == nil:
			c.ioctlOK = true
		case errors.Is(err, unix.ENOTTY) || errors.Is(err, unix.EPROTONOSUPPORT):
		default:
			return err
		}
	}
	if !c.ioctlOK {
		return c.getContextWrite(drvIn, drvOut)
	}
	if err := c.allocAsyncFD(); err != nil {
		return err
	}
	c.invokeWrite = c.probeInvokeWrite()
	return nil
}

func (c *Context) getContextIoctl(drvIn, drvOut []byte) error {
	var ncv uint32
	var core uint64
	call := abi.NewIoctl(abi.UVERBS_OBJECT_DEVICE, abi.UVERBS_METHOD_GET_CONTEXT)
	call.Out(abi.UVERBS_ATTR_GET_CONTEXT_NUM_COMP_VECTORS, kabi.Bytes(&ncv))
	call.Out(abi.UVERBS_ATTR_GET_CONTEXT_CORE_SUPPORT, kabi.Bytes(&core))
	call.UHWIn(drvIn)
	call.UHWOut(drvOut)
	if err := c.k.ioctl(call, c.driver); err != nil {
		return wrap(c.dev.Name, "get context", err)
	}
	c.numCompVectors, c.coreSupport = ncv, core
	return nil
}

func (c *Context) getContextWrite(drvIn, drvOut []byte) error {
	var resp abi.GetContextResp
	req := abi.GetContext{}
	err := c.k.write(abi.CmdGetContext.Build(&req, &resp, drvIn, drvOut))
	if err != nil {
		return wrap(c.dev.Name, "get context", err)
	}
	c.numCompVectors = resp.NumCompVectors
	f, err := waitfd.New(int(int32(resp.AsyncFD)), "uverbs-async-events:"+c.dev.Name)
	if err != nil {
		return wrap(c.dev.Name, "get context", err)
	}
	c.events = f
	return nil
}

// allocAsyncFD creates the async event fd (ioctl GET_CONTEXT does not).
func (c *Context) allocAsyncFD() error {
	call := abi.NewIoctl(abi.UVERBS_OBJECT_ASYNC_EVENT, abi.UVERBS_METHOD_ASYNC_EVENT_ALLOC)
	i := call.NewFD(abi.UVERBS_ATTR_ASYNC_EVENT_ALLOC_FD_HANDLE)
	if err := c.k.ioctl(call, c.driver); err != nil {
		return wrap(c.dev.Name, "allocate async event fd", err)
	}
	fd := int(int64(call.Data(i)))
	f, err := waitfd.New(fd, "uverbs-async-events:"+c.dev.Name)
	if err != nil {
		return wrap(c.dev.Name, "allocate async event fd", err)
	}
	c.events, c.asyncFD = f, fd
	return nil
}

// probeInvokeWrite asks for QUERY_DEVICE through INVOKE_WRITE without
// buffers: a kernel that runs write() commands through ioctl answers
// ENOSPC (the response buffer is too small), as rdma-core's probe expects.
func (c *Context) probeInvokeWrite() bool {
	call := abi.NewIoctl(abi.UVERBS_OBJECT_DEVICE, abi.UVERBS_METHOD_INVOKE_WRITE)
	call.Const(abi.UVERBS_ATTR_WRITE_CMD, abi.IB_USER_VERBS_CMD_QUERY_DEVICE)
	return errors.Is(c.k.ioctl(call, c.driver), unix.ENOSPC)
}

// Device is the device the context was opened on.
func (c *Context) Device() Device { return c.dev }

// NumCompVectors is the number of completion vectors the device offers.
func (c *Context) NumCompVectors() int { return int(c.numCompVectors) }

// UsesIoctl reports whether the context talks to the kernel through
// RDMA_VERBS_IOCTL (true) or write() only (false).
func (c *Context) UsesIoctl() bool { return c.ioctlOK }

// CoreSupport is what GET_CONTEXT reports of the kernel's optional core
// features (zero on the write() interface).
func (c *Context) CoreSupport() CoreSupport { return CoreSupport(c.coreSupport) }

// CoreSupport is the bit set of enum ib_uverbs_core_support.
type CoreSupport uint64

// Core support bits.
const (
	// CoreOptionalMRAccess: the kernel accepts, and ignores where
	// unsupported, the optional MR access flags (relaxed ordering).
	CoreOptionalMRAccess CoreSupport = abi.IB_UVERBS_CORE_SUPPORT_OPTIONAL_MR_ACCESS
)

// QueryContext asks the kernel again for the context's number of
// completion vectors and core support (UVERBS_METHOD_QUERY_CONTEXT). Only
// drivers with a query_ucontext operation (mlx5) have it; the others give
// an error matching ErrNotSupported, as does the write() interface.
func (c *Context) QueryContext() (numCompVectors int, core CoreSupport, err error) {
	const op = "query context"
	if !c.ioctlOK {
		return 0, 0, wrap(c.dev.Name, op, fmt.Errorf("needs the ioctl interface: %w", ErrNotSupported))
	}
	var ncv uint32
	var cs uint64
	call := abi.NewIoctl(abi.UVERBS_OBJECT_DEVICE, abi.UVERBS_METHOD_QUERY_CONTEXT)
	call.Out(abi.UVERBS_ATTR_QUERY_CONTEXT_NUM_COMP_VECTORS, kabi.Bytes(&ncv))
	call.Out(abi.UVERBS_ATTR_QUERY_CONTEXT_CORE_SUPPORT, kabi.Bytes(&cs))
	if err := c.ioctl(op, call); err != nil {
		return 0, 0, err
	}
	return int(ncv), CoreSupport(cs), nil
}

// Close destroys the context and, with it, every object created through
// it, and unmaps their queues; waiters for its async events and on its
// completion channels are woken (with an error matching os.ErrClosed).
// It is safe to call more than once and concurrently with any other use
// of the context and its objects: a creation it overtakes fails with an
// error matching os.ErrClosed and leaves nothing behind.
//
// A shared context, the one rdma.Device.Context hands to every user of a
// device, is not its users' to close: Close returns an error matching
// ErrShared and changes nothing, and the context keeps working for all.
func (c *Context) Close() error {
	if c.shared.Load() {
		return wrap(c.dev.Name, "close", ErrShared)
	}
	return c.close()
}

// Share marks c shared and returns the function that closes it: from
// then on c's Close refuses with ErrShared. It is for package rdma, whose
// device cache hands one context to every user of a device (see
// internal/ctxshare); the key keeps other callers out.
func Share(c *Context, _ ctxshare.Key) (close func() error) {
	c.shared.Store(true)
	return c.close
}

// close is Close, also for a shared context.
func (c *Context) close() error {
	c.closeMu.Lock()
	defer c.closeMu.Unlock()
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil
	}
	c.closed = true
	var errs []error
	if c.events != nil {
		errs = append(errs, c.events.Close())
	}
	errs = append(errs, c.k.close())
	var owned []interface{ release() error }
	for _, o := range c.objects {
		if r, ok := o.(interface{ release() error }); ok {
			owned = append(owned, r)
		}
	}
	for ch := range c.channels {
		owned = append(owned, ch)
	}
	c.objects, c.channels = nil, nil
	c.mu.Unlock()
	// The kernel objects died with the fd; their mappings are released,
	// and the completion channels closed, outside c.mu, as a post holds
	// its queue's lock while it takes c.mu.
	for _, r := range owned {
		errs = append(errs, r.release())
	}
	errs = append(errs, c.prov.close())
	return wrap(c.dev.Name, "close", errors.Join(errs...))
}

// ioctl sends one ioctl under the context's read lock.
func (c *Context) ioctl(op string, call *abi.Ioctl) error {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if c.closed {
		return wrap(c.dev.Name, op, errClosed)
	}
	return c.wrapCmd(op, c.k.ioctl(call, c.driver))
}

// write runs a write() command, through UVERBS_METHOD_INVOKE_WRITE when
// the kernel has it (as libibverbs does), else through write().
func (c *Context) write(op string, w *abi.WriteCmd) error {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if c.closed {
		return wrap(c.dev.Name, op, errClosed)
	}
	return c.wrapCmd(op, c.writeLocked(w))
}

func (c *Context) writeLocked(w *abi.WriteCmd) error {
	if done, err := c.viaMethod(w); done {
		return err
	}
	if !c.invokeWrite {
		return c.k.write(w)
	}
	call := abi.NewIoctl(abi.UVERBS_OBJECT_DEVICE, abi.UVERBS_METHOD_INVOKE_WRITE)
	if len(w.Req) > 0 {
		call.In(abi.UVERBS_ATTR_CORE_IN, w.Req)
	}
	if len(w.Resp) > 0 {
		call.Out(abi.UVERBS_ATTR_CORE_OUT, w.Resp)
	}
	call.Const(abi.UVERBS_ATTR_WRITE_CMD, uint64(w.Command))
	call.UHWIn(w.DriverIn)
	call.UHWOut(w.DriverOut)
	return c.k.ioctl(call, c.driver)
}

// newHandle is a fresh user handle, for the create command of an object
// that async events name (a CQ, QP or SRQ).
func (c *Context) newHandle() uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.nextHandle++
	return c.nextHandle
}

// adopt makes obj, fully made (its queues mapped), one of the context's
// objects under handle h: async events find it, and the context's Close
// releases it. It fails when the context was closed since the object was
// created: the kernel destroyed the object with the context, and the
// creator releases what it mapped itself. Either the creator or Close
// releases, never both nor neither: both decide under c.mu.
func (c *Context) adopt(op string, h uint64, obj any) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return wrap(c.dev.Name, op, errClosed)
	}
	c.objects[h] = obj
	return nil
}

// adoptChannel is adopt for a completion channel, which the context's
// Close closes.
func (c *Context) adoptChannel(op string, ch *CompChannel) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return wrap(c.dev.Name, op, errClosed)
	}
	if c.channels == nil {
		c.channels = map[*CompChannel]struct{}{}
	}
	c.channels[ch] = struct{}{}
	return nil
}

func (c *Context) unregisterChannel(ch *CompChannel) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.channels, ch)
}

func (c *Context) unregister(h uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.objects, h)
}

func (c *Context) lookup(h uint64) any {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.objects[h]
}

// isClosed reports whether the context is closed.
func (c *Context) isClosed() bool {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.closed
}

// driverUdata is what a driver needs with the commands it extends.
type driverUdata struct {
	getContextIn  []byte
	getContextOut int
	allocPDOut    int
	regMRIn       []byte
	regMROut      int
	resizeCQOut   int
	createCQOut   int
	createQPOut   int
	createSRQOut  int
	createAHOut   int
}
