package nldev

import (
	"errors"
	"fmt"
	"os"
	"strconv"

	"github.com/mdlayher/netlink"
	"golang.org/x/sys/unix"

	"github.com/rdmastack/rdmastack/nldev/internal/nlabi"
)

// Owner is who holds a tracked RDMA object: a user process (PID) or a
// kernel module (Kernel, e.g. "ib_core"). Both are empty for a user object
// whose task has exited or lives outside the caller's PID namespace.
type Owner struct {
	PID    uint32 // RDMA_NLDEV_ATTR_RES_PID, in the caller's PID namespace
	Kernel string // RDMA_NLDEV_ATTR_RES_KERN_NAME
}

// IsKernel reports whether a kernel module owns the object.
func (o Owner) IsKernel() bool { return o.Kernel != "" }

// String returns "[name]" for kernel owners, "pid N" for processes.
func (o Owner) String() string {
	switch {
	case o.Kernel != "":
		return "[" + o.Kernel + "]"
	case o.PID != 0:
		return "pid " + strconv.FormatUint(uint64(o.PID), 10)
	}
	return "unknown"
}

// ResourceInfo is what every tracked object reports besides its own
// fields: its device, its owner and its driver's extra attributes.
type ResourceInfo struct {
	DevIndex uint32       // RDMA_NLDEV_ATTR_DEV_INDEX
	DevName  string       // RDMA_NLDEV_ATTR_DEV_NAME
	Owner    Owner        // RDMA_NLDEV_ATTR_RES_PID or RES_KERN_NAME
	Driver   []DriverAttr // RDMA_NLDEV_ATTR_DRIVER; nil when the driver adds nothing
}

func (r *ResourceInfo) info() *ResourceInfo { return r }

// decodeAttr handles the attributes every entry shares; it reports
// whether the attribute was one of them.
func (r *ResourceInfo) decodeAttr(ad *netlink.AttributeDecoder) bool {
	switch ad.Type() {
	case nlabi.RDMA_NLDEV_ATTR_DEV_INDEX:
		r.DevIndex = ad.Uint32()
	case nlabi.RDMA_NLDEV_ATTR_DEV_NAME:
		r.DevName = ad.String()
	case nlabi.RDMA_NLDEV_ATTR_RES_PID:
		r.Owner.PID = ad.Uint32()
	case nlabi.RDMA_NLDEV_ATTR_RES_KERN_NAME:
		r.Owner.Kernel = ad.String()
	case nlabi.RDMA_NLDEV_ATTR_DRIVER:
		ad.Nested(func(nad *netlink.AttributeDecoder) error {
			r.Driver = decodeDriverAttrs(nad)
			return nil
		})
	default:
		return false
	}
	return true
}

// ResourceOption changes what a dump of tracked objects asks for.
type ResourceOption uint8

const (
	// DriverDetails asks for the objects a driver creates for itself
	// (RDMA_NLDEV_ATTR_DRIVER_DETAILS, Linux 6.10; those objects are hidden
	// otherwise). On older kernels the request fails with ErrNotSupported.
	DriverDetails ResourceOption = 1 << iota
)

// resEntry is implemented by the pointer of every resource type: decodeAttr
// reads one attribute of an entry, required lists the attributes an entry
// must have (the ones iproute2 refuses to print without).
type resEntry[T any] interface {
	*T
	info() *ResourceInfo
	decodeAttr(ad *netlink.AttributeDecoder)
	required() []uint16
}

// attrSet records which attribute types an entry carried.
type attrSet [4]uint64

func (s *attrSet) add(t uint16) {
	if int(t) < len(s)*64 {
		s[t/64] |= 1 << (t % 64)
	}
}

func (s *attrSet) has(t uint16) bool { return int(t) < len(s)*64 && s[t/64]&(1<<(t%64)) != 0 }

// decodeEntry reads one object from the attributes of ad: an entry nest of
// a dump, or the top level of a doit reply.
func decodeEntry[T any, P resEntry[T]](ad *netlink.AttributeDecoder) (T, error) {
	var v T
	p := P(&v)
	var seen attrSet
	for ad.Next() {
		seen.add(ad.Type())
		if !p.info().decodeAttr(ad) {
			p.decodeAttr(ad)
		}
	}
	if err := ad.Err(); err != nil {
		return v, err
	}
	for _, t := range p.required() {
		if !seen.has(t) {
			return v, fmt.Errorf("entry lacks attribute %d: %w", t, errProto)
		}
	}
	return v, nil
}

// decodeTable reads one message of a resource dump: the device's index and
// name and a table of entries; a large table spans several messages, which
// the caller concatenates.
func decodeTable[T any, P resEntry[T]](b []byte, table, entry uint16) ([]T, error) {
	ad, err := netlink.NewAttributeDecoder(b)
	if err != nil {
		return nil, err
	}
	var (
		out              []T
		dev              uint32
		name             string
		haveDev, haveTab bool
	)
	for ad.Next() {
		switch ad.Type() {
		case nlabi.RDMA_NLDEV_ATTR_DEV_INDEX:
			dev, haveDev = ad.Uint32(), true
		case nlabi.RDMA_NLDEV_ATTR_DEV_NAME:
			name = ad.String()
		case table:
			haveTab = true
			ad.Nested(func(tad *netlink.AttributeDecoder) error {
				for tad.Next() {
					if tad.Type() != entry {
						continue
					}
					tad.Nested(func(ead *netlink.AttributeDecoder) error {
						v, err := decodeEntry[T, P](ead)
						if err != nil {
							return err
						}
						out = append(out, v)
						return nil
					})
				}
				return nil
			})
		}
	}
	if err := ad.Err(); err != nil {
		return nil, err
	}
	if !haveDev || !haveTab {
		return nil, fmt.Errorf("reply lacks the device index or the table: %w", errProto)
	}
	for i := range out {
		in := P(&out[i]).info()
		in.DevIndex, in.DevName = dev, name
	}
	return out, nil
}

// resKind describes one kind of tracked object and its commands.
type resKind struct {
	name, plural string // "QP", "QPs": for errors
	cmd, rawCmd  uint16 // RDMA_NLDEV_CMD_RES_*_GET[_RAW]; rawCmd 0: none
	rawSince     string // the release that brought rawCmd, when it needs probing
	table, entry uint16 // RDMA_NLDEV_ATTR_RES_* table and entry nests
	id           uint16 // the doit key attribute
	perPort      bool   // QP and cm_id doits need PORT_INDEX; the others refuse it
	qpKey        bool   // the doit key of QP0 and QP1 carries the port (see restrackKey)
}

// restrackKey is the id the kernel files an object under. QPs are filed
// under their number, except QP0 and QP1, which every port has: the kernel
// (rdma_restrack_add) files those under qpn | port<<24.
func (k *resKind) restrackKey(port, id uint32) uint32 {
	if k.qpKey && id <= 1 {
		return id | port<<24
	}
	return id
}

// resDump dumps the objects of one kind on device dev (port 0: every port).
func resDump[T any, P resEntry[T]](c *Client, k *resKind, raw bool, dev, port uint32, opts []ResourceOption) ([]T, error) {
	what := k.plural
	cmd := k.cmd
	if raw {
		what, cmd = "raw "+k.plural, k.rawCmd
	}
	op := fmt.Sprintf("dump %s of device %d", what, dev)
	if port != 0 {
		op = fmt.Sprintf("dump %s of port %d of device %d", what, port, dev)
	}
	details, err := c.driverDetails(op, opts)
	if err != nil {
		return nil, err
	}
	msgs, err := c.execute(request{op: op, cmd: cmd, dump: true, attrs: func(ae *netlink.AttributeEncoder) {
		ae.Uint32(nlabi.RDMA_NLDEV_ATTR_DEV_INDEX, dev)
		if port != 0 {
			ae.Uint32(nlabi.RDMA_NLDEV_ATTR_PORT_INDEX, port)
		}
		if details {
			ae.Uint8(nlabi.RDMA_NLDEV_ATTR_DRIVER_DETAILS, 1)
		}
	}})
	if err != nil {
		return nil, c.resError(op, k, raw, dev, port, err)
	}
	var out []T
	for _, b := range msgs {
		vs, err := decodeTable[T, P](b, k.table, k.entry)
		if err != nil {
			return nil, wrap(op, fmt.Errorf("decode %s: %w", k.plural, err))
		}
		out = append(out, vs...)
	}
	return out, nil
}

// resGet fetches one object by its id (the doit). port must be given for
// per-port kinds (QP, cm_id) and must be 0 for the others.
func resGet[T any, P resEntry[T]](c *Client, k *resKind, raw bool, dev, port, id uint32) (T, error) {
	var zero T
	what := k.name
	cmd := k.cmd
	if raw {
		what, cmd = "raw "+k.name, k.rawCmd
	}
	op := fmt.Sprintf("get %s %d of device %d", what, id, dev)
	if k.perPort {
		op = fmt.Sprintf("get %s %d of port %d of device %d", what, id, port, dev)
		if port == 0 {
			return zero, invalid(op, "ports are numbered from 1")
		}
	}
	msgs, err := c.execute(request{op: op, cmd: cmd, attrs: func(ae *netlink.AttributeEncoder) {
		ae.Uint32(nlabi.RDMA_NLDEV_ATTR_DEV_INDEX, dev)
		if k.perPort {
			ae.Uint32(nlabi.RDMA_NLDEV_ATTR_PORT_INDEX, port)
		}
		ae.Uint32(k.id, k.restrackKey(port, id))
	}})
	if err != nil {
		switch {
		case errors.Is(err, unix.ENOENT):
			return zero, withMessage(&Error{Op: op, Err: fmt.Errorf("no %s %d: %w", k.name, id, unix.ENOENT)}, err)
		case k.perPort && errors.Is(err, unix.EAGAIN):
			// The kernel found the object on another port (or on none).
			return zero, withMessage(&Error{Op: op, Err: fmt.Errorf("%s %d is not on port %d: %w", k.name, id, port,
				notExistErrno{unix.EAGAIN})}, err)
		}
		return zero, c.resError(op, k, raw, dev, port, err)
	}
	if len(msgs) != 1 {
		return zero, &Error{Op: op, Err: fmt.Errorf("kernel sent %d replies, want 1: %w", len(msgs), errProto)}
	}
	ad, err := netlink.NewAttributeDecoder(msgs[0])
	if err != nil {
		return zero, wrap(op, err)
	}
	v, err := decodeEntry[T, P](ad)
	if err != nil {
		return zero, wrap(op, fmt.Errorf("decode %s: %w", k.name, err))
	}
	return v, nil
}

// withMessage copies the kernel's extended-ack text of err into e.
func withMessage(e *Error, err error) error {
	var ne *Error
	if errors.As(err, &ne) {
		e.Message = ne.Message
	}
	return e
}

// resError explains the kernel's EINVAL, which means any of: no such
// device, no such port, a command this kernel lacks, or (raw) a driver
// without a raw format.
func (c *Client) resError(op string, k *resKind, raw bool, dev, port uint32, err error) error {
	if !isEINVAL(err) {
		return err
	}
	d, derr := c.Device(dev)
	if errors.Is(derr, os.ErrNotExist) {
		return mapNotFound(op, fmt.Sprintf("no device with index %d", dev), err)
	}
	if derr != nil {
		return err
	}
	if port > d.Ports {
		return mapNotFound(op, fmt.Sprintf("device %d has no port %d", dev, port), err)
	}
	if !raw {
		return err
	}
	if k.rawSince != "" {
		has, perr := c.hasResCommand(k.rawCmd, k, dev)
		if perr == nil && !has {
			return withMessage(&Error{Op: op, Err: fmt.Errorf("raw %s need Linux %s: %w", k.plural, k.rawSince, ErrNotSupported)}, err)
		}
	}
	return withMessage(&Error{Op: op, Err: fmt.Errorf("driver of device %s has no raw %s format: %w",
		d.Name, k.name, notSupportedErrno{unix.EINVAL})}, err)
}

// notSupportedErrno is the cause of a request the kernel refused with
// EINVAL because the driver cannot do it: it matches ErrNotSupported and
// the errno.
type notSupportedErrno struct{ unix.Errno }

func (e notSupportedErrno) Is(target error) bool {
	return target == ErrNotSupported || target == e.Errno
}

func (e notSupportedErrno) Unwrap() error { return e.Errno }

// hasResCommand probes whether the kernel knows cmd: a doit for an object
// id that cannot exist gets ENOENT (or EPERM, for admin-only commands)
// from a kernel that has the command and EINVAL from one that does not.
func (c *Client) hasResCommand(cmd uint16, k *resKind, dev uint32) (bool, error) {
	_, err := c.execute(request{op: "probe command", cmd: cmd, attrs: func(ae *netlink.AttributeEncoder) {
		ae.Uint32(nlabi.RDMA_NLDEV_ATTR_DEV_INDEX, dev)
		if k.perPort {
			ae.Uint32(nlabi.RDMA_NLDEV_ATTR_PORT_INDEX, 1)
		}
		ae.Uint32(k.id, ^uint32(0))
	}})
	switch {
	case err == nil, errors.Is(err, unix.ENOENT), errors.Is(err, unix.EPERM), errors.Is(err, unix.EAGAIN):
		return true, nil
	case isEINVAL(err):
		return false, nil
	}
	return false, err
}

// HasDriverDetails reports whether the kernel knows
// RDMA_NLDEV_ATTR_DRIVER_DETAILS (Linux 6.10), which the DriverDetails
// option sends. It asks SYS_GET with the attribute: kernels before 6.12
// parse that command strictly and refuse attributes they do not know.
func (c *Client) HasDriverDetails() (bool, error) {
	_, err := c.execute(request{op: "probe driver details", cmd: nlabi.RDMA_NLDEV_CMD_SYS_GET,
		attrs: func(ae *netlink.AttributeEncoder) { ae.Uint8(nlabi.RDMA_NLDEV_ATTR_DRIVER_DETAILS, 0) }})
	switch {
	case err == nil:
		return true, nil
	case isEINVAL(err):
		return false, nil
	}
	return false, err
}

// driverDetails checks the options of a dump: whether to send
// DRIVER_DETAILS, or ErrNotSupported when the kernel does not know it.
func (c *Client) driverDetails(op string, opts []ResourceOption) (bool, error) {
	var o ResourceOption
	for _, x := range opts {
		o |= x
	}
	if o&^DriverDetails != 0 {
		return false, invalid(op, fmt.Sprintf("unknown resource option %#x", uint8(o&^DriverDetails)))
	}
	if o&DriverDetails == 0 {
		return false, nil
	}
	has, err := c.HasDriverDetails()
	if err != nil {
		return false, wrap(op, err)
	}
	if !has {
		return false, &Error{Op: op, Err: fmt.Errorf("driver details need Linux 6.10: %w", ErrNotSupported)}
	}
	return true, nil
}
