package rdma

import (
	"encoding/binary"
	"errors"
	"fmt"

	"golang.org/x/sys/unix"

	"github.com/rdmastack/rdmastack/internal/kabi"
	"github.com/rdmastack/rdmastack/rdma/internal/ucma"
	"github.com/rdmastack/rdmastack/uverbs"
)

// Option is an id option SetOption sets (RDMA_OPTION_ID_* of
// rdma_set_option's level RDMA_OPTION_ID).
type Option uint32

// Options.
const (
	// OptionTOS is the type of service, 0..255: the traffic class of a
	// RoCE route (set it before ResolveRoute).
	OptionTOS Option = ucma.RDMA_OPTION_ID_TOS
	// OptionReuseAddr, 0 or 1: bind to a port other ids with the option
	// hold, as long as none listens (set it before Bind).
	OptionReuseAddr Option = ucma.RDMA_OPTION_ID_REUSEADDR
	// OptionAFOnly, 0 or 1: an IPv6 id binds IPv6 only, so that an IPv4
	// id can hold the same port (set it before Bind; refused once the id
	// listens or resolves).
	OptionAFOnly Option = ucma.RDMA_OPTION_ID_AFONLY
	// OptionAckTimeout, 0..31: the RC QP's local ACK timeout exponent
	// (4.096 µs × 2^n), overriding the one the route gives (Linux 5.1).
	OptionAckTimeout Option = ucma.RDMA_OPTION_ID_ACK_TIMEOUT
)

var optionNames = [...]string{"TOS", "REUSEADDR", "AFONLY", "ACK_TIMEOUT"}

// String returns the C name without RDMA_OPTION_ID_.
func (o Option) String() string {
	if int(o) < len(optionNames) {
		return optionNames[o]
	}
	return fmt.Sprintf("Option(%d)", uint32(o))
}

// optionValue encodes value as the kernel takes option o: a u8 for TOS
// and ACK_TIMEOUT, an int for the flags.
func optionValue(o Option, value int) ([]byte, error) {
	var limit int
	switch o {
	case OptionTOS:
		limit = 0xFF
	case OptionAckTimeout:
		limit = 31
	case OptionReuseAddr, OptionAFOnly:
		limit = 1
	default:
		return nil, fmt.Errorf("unknown option: %w", ErrNotSupported)
	}
	if value < 0 || value > limit {
		return nil, fmt.Errorf("value %d: want 0 to %d: %w", value, limit, errInvalid)
	}
	if o == OptionTOS || o == OptionAckTimeout {
		return []byte{byte(value)}, nil
	}
	return binary.NativeEndian.AppendUint32(nil, uint32(value)), nil
}

// SetOption sets an option of the id (rdma_set_option at level
// RDMA_OPTION_ID). An option the running kernel lacks fails with an
// error matching ErrNotSupported (and unix.ENOSYS); one set in a state
// that does not take it (AFONLY once listening, ACK_TIMEOUT on a UD id)
// matches unix.EINVAL.
func (id *ID) SetOption(o Option, value int) error {
	op := fmt.Sprintf("set option %v", o)
	val, err := optionValue(o, value)
	if err != nil {
		return fmt.Errorf("rdma: %s: %w", op, err)
	}
	req := ucma.SetOption{ID: id.handle, Level: ucma.RDMA_OPTION_ID, OptName: uint32(o), OptLen: uint32(len(val))}
	err = id.writeIn(op, ucma.RDMA_USER_CM_CMD_SET_OPTION, kabi.Bytes(&req), 0, val)
	if errors.Is(err, unix.ENOSYS) {
		return fmt.Errorf("%w (%w)", err, ErrNotSupported)
	}
	return err
}

// writeIn sends a command whose pointer field points at data, unless
// the id is closed.
func (id *ID) writeIn(op string, cmd uint32, req []byte, ptrOff int, data []byte) error {
	id.cmd.RLock()
	defer id.cmd.RUnlock()
	if id.dead {
		return fmt.Errorf("rdma: %s: %w", op, errClosed)
	}
	err := id.ch.fd.Control(func(fd int) error { return ucma.WriteIn(fd, cmd, req, ptrOff, data) })
	return id.ch.wrapErr(op, err)
}

// Notify tells the connection manager of a QP event (rdma_notify): only
// uverbs.EventCommEst counts, which makes a passive id ESTABLISHED when
// data arrived before the peer's RTU. Forward it from the QP's context's
// async events (Context.GetEvent).
func (id *ID) Notify(ev uverbs.EventType) error {
	req := ucma.Notify{ID: id.handle, Event: uint32(ev)}
	return id.write(fmt.Sprintf("notify %v", ev), ucma.RDMA_USER_CM_CMD_NOTIFY, kabi.Bytes(&req), 0, nil)
}
