package nldev

import (
	"errors"
	"fmt"

	"github.com/mdlayher/netlink"
	"golang.org/x/sys/unix"

	"github.com/rdmastack/rdmastack/nldev/internal/nlabi"
)

// Client talks RDMA netlink to the kernel. A Client is safe for use by one
// goroutine at a time; Close releases its socket.
type Client struct {
	c *netlink.Conn
}

// Dial opens a NETLINK_RDMA socket in the caller's network namespace. On
// a kernel without RDMA the error matches ErrNoRDMA and
// unix.EPROTONOSUPPORT.
func Dial() (*Client, error) {
	c, err := netlink.Dial(unix.NETLINK_RDMA, nil)
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
	var data []byte
	if r.attrs != nil {
		ae := netlink.NewAttributeEncoder()
		r.attrs(ae)
		b, err := ae.Encode()
		if err != nil {
			return nil, wrap(r.op, err)
		}
		data = b
	}
	flags := netlink.Request
	if r.dump {
		flags |= netlink.Dump
	}
	msgs, err := c.c.Execute(netlink.Message{
		Header: netlink.Header{Type: netlink.HeaderType(nlabi.GetType(nlabi.RDMA_NL_NLDEV, r.cmd)), Flags: flags},
		Data:   data,
	})
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
