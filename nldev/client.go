package nldev

import (
	"errors"
	"fmt"
	"os"

	"github.com/mdlayher/netlink"
	"golang.org/x/sys/unix"

	"github.com/rdmastack/rdmastack/nldev/internal/nlabi"
)

// Client talks RDMA netlink to the kernel. A Client is safe for use by one
// goroutine at a time; Close releases its socket.
type Client struct {
	c    *netlink.Conn
	frmr frmrSupport // whether the kernel has the FRMR pool commands (frmr_client.go)
}

// Dial opens a NETLINK_RDMA socket in the caller's network namespace. On
// a kernel without RDMA the error matches ErrNoRDMA and
// unix.EPROTONOSUPPORT.
func Dial() (*Client, error) { return dial(nil) }

// DialNetNS opens a NETLINK_RDMA socket in the network namespace that the
// open file nsfd refers to (a /proc/PID/ns/net or /run/netns/NAME file),
// without moving the calling thread. A closed nsfd gives an error matching
// unix.EBADF, a file that is not a network namespace ErrNotNetNS.
func DialNetNS(nsfd int) (*Client, error) {
	if err := checkNetnsFD("dial", nsfd); err != nil {
		return nil, err
	}
	return dial(&netlink.Config{NetNS: nsfd})
}

func dial(cfg *netlink.Config) (*Client, error) {
	c, err := netlink.Dial(unix.NETLINK_RDMA, cfg)
	if err != nil {
		if errors.Is(err, unix.EPROTONOSUPPORT) {
			return nil, &Error{Op: "dial", Err: fmt.Errorf("%w (%w)", ErrNoRDMA, err)}
		}
		return nil, wrap("dial", err)
	}
	// Extended acks carry the kernel's reason for a policy failure. Old
	// kernels may lack the option; the client works without it.
	_ = c.SetOption(netlink.ExtendedAcknowledge, true)
	return newClient(c), nil
}

// newClient wraps an open connection; tests pass an nltest connection.
func newClient(c *netlink.Conn) *Client { return &Client{c: c} }

// Close closes the socket. Closing twice is harmless.
func (c *Client) Close() error {
	if c == nil || c.c == nil {
		return nil
	}
	err := c.c.Close()
	c.c = nil
	return err
}

// request is one nldev command: the single place where messages are built,
// sent and their replies checked.
type request struct {
	op    string // for errors
	cmd   uint16 // RDMA_NLDEV_CMD_*
	dump  bool
	ack   bool // a write that answers with nothing but an acknowledgement
	attrs func(*netlink.AttributeEncoder)
}

// execute sends r and returns the payloads of the replies. Flags follow the
// kernel's acknowledgement rules (reference: a doit that returns data is
// sent without NLM_F_ACK, or the ack would be left queued; errors are
// always acknowledged).
func (c *Client) execute(r request) ([][]byte, error) {
	if c == nil || c.c == nil {
		return nil, &Error{Op: r.op, Err: unix.EBADF}
	}
	m, err := r.message()
	if err != nil {
		return nil, err
	}
	msgs, err := c.c.Execute(m)
	if err != nil {
		return nil, wrap(r.op, err)
	}
	out := make([][]byte, 0, len(msgs))
	for _, m := range msgs {
		if m.Header.Type == netlink.Error || m.Header.Type == netlink.Done {
			continue
		}
		if nlabi.GetClient(uint16(m.Header.Type)) != nlabi.RDMA_NL_NLDEV {
			return nil, &Error{Op: r.op, Err: fmt.Errorf("unexpected reply type %#x: %w", uint16(m.Header.Type), unix.EPROTO)}
		}
		out = append(out, m.Data)
	}
	return out, nil
}

// dumpAll runs a dump request and decodes every reply with decode.
// notFound, when set, is what an EINVAL answer means (the kernel answers
// EINVAL for an unknown device or port index).
func dumpAll[T any](c *Client, r request, notFound string, decode func([]byte) (T, error)) ([]T, error) {
	r.dump = true
	msgs, err := c.execute(r)
	if err != nil {
		return nil, mapNotFound(r.op, notFound, err)
	}
	out := make([]T, 0, len(msgs))
	for _, b := range msgs {
		v, err := decode(b)
		if err != nil {
			return nil, wrap(r.op, err)
		}
		out = append(out, v)
	}
	return out, nil
}

// getOne runs a doit request that answers with exactly one message.
func getOne[T any](c *Client, r request, notFound string, decode func([]byte) (T, error)) (T, error) {
	var zero T
	msgs, err := c.execute(r)
	if err != nil {
		return zero, mapNotFound(r.op, notFound, err)
	}
	if len(msgs) != 1 {
		return zero, &Error{Op: r.op, Err: fmt.Errorf("kernel sent %d replies, want 1: %w", len(msgs), errProto)}
	}
	v, err := decode(msgs[0])
	if err != nil {
		return zero, wrap(r.op, err)
	}
	return v, nil
}

// mapNotFound turns the kernel's EINVAL for an unknown index into an error
// that also matches os.ErrNotExist.
func mapNotFound(op, notFound string, err error) error {
	if notFound == "" || !isEINVAL(err) {
		return err
	}
	e := &Error{Op: op, Err: fmt.Errorf("%s: %w", notFound, errNotExistEINVAL)}
	var ne *Error
	if errors.As(err, &ne) {
		e.Message = ne.Message
	}
	return e
}

// do runs a write request that answers with an acknowledgement only.
func (c *Client) do(r request) error {
	r.ack = true
	_, err := c.execute(r)
	return err
}

// explainEINVAL tells apart the two meanings of a write's EINVAL: when the
// device index is unknown the error also matches os.ErrNotExist.
func (c *Client) explainEINVAL(op string, dev uint32, err error) error {
	if !isEINVAL(err) {
		return err
	}
	if _, gerr := c.Device(dev); errors.Is(gerr, os.ErrNotExist) {
		return mapNotFound(op, fmt.Sprintf("no device with index %d", dev), err)
	}
	return err
}
