package nldev

import (
	"errors"
	"fmt"
	"os"

	"github.com/mdlayher/netlink"
	"golang.org/x/sys/unix"

	"github.com/rdmastack/rdmastack/nldev/internal/nlabi"
)

// batchSize bounds the requests sent together: each reply is its own
// datagram, and the socket's receive buffer must hold a whole batch (the
// kernel drops what does not fit).
const batchSize = 16

// result is one batched request's reply payload, or its error.
type result struct {
	data []byte
	err  error
}

// batch runs doit requests several to a datagram and returns each one's
// result, in order. The kernel answers each request of a datagram in turn
// with one reply or one error, so the n-th datagram back belongs to the
// n-th request; replies are checked against their request's sequence,
// and should the two ever disagree the rest runs one request at a time.
func (c *Client) batch(reqs []request) []result {
	results := make([]result, len(reqs))
	for start := 0; start < len(reqs); start += batchSize {
		chunk := reqs[start:min(start+batchSize, len(reqs))]
		if !c.batchChunk(chunk, results[start:]) {
			for i, r := range chunk {
				msgs, err := c.execute(r)
				results[start+i] = single(r, msgs, err)
			}
		}
	}
	return results
}

// batchChunk sends one chunk and reads its replies; false means the
// replies could not be matched and the chunk must be run again one by one
// (the requests are all reads, so repeating them changes nothing).
func (c *Client) batchChunk(chunk []request, out []result) bool {
	if c == nil || c.c == nil {
		for i, r := range chunk {
			out[i] = result{err: &Error{Op: r.op, Err: unix.EBADF}}
		}
		return true
	}
	msgs := make([]netlink.Message, len(chunk))
	for i, r := range chunk {
		m, err := r.message()
		if err != nil {
			return false
		}
		msgs[i] = m
	}
	sent, err := c.c.SendMessages(msgs)
	if err != nil {
		return false
	}
	for i, r := range chunk {
		got, err := c.c.Receive()
		if err != nil {
			var oe *netlink.OpError
			var sys *os.SyscallError
			if !errors.As(err, &oe) || errors.As(err, &sys) {
				return false // the socket failed, not the request
			}
			out[i] = result{err: wrap(r.op, err)}
			continue
		}
		if len(got) != 1 || got[0].Header.Sequence != sent[i].Header.Sequence {
			// Misaligned: drain what is left of this chunk and start over.
			for j := i + 1; j < len(chunk); j++ {
				c.c.Receive()
			}
			return false
		}
		out[i] = result{data: got[0].Data}
	}
	return true
}

// single is execute's answer to one doit as a result.
func single(r request, msgs [][]byte, err error) result {
	switch {
	case err != nil:
		return result{err: err}
	case len(msgs) != 1:
		return result{err: &Error{Op: r.op, Err: fmt.Errorf("kernel sent %d replies, want 1: %w", len(msgs), errProto)}}
	}
	return result{data: msgs[0]}
}

// message builds the netlink message of a request.
func (r request) message() (netlink.Message, error) {
	var data []byte
	if r.attrs != nil {
		ae := netlink.NewAttributeEncoder()
		r.attrs(ae)
		b, err := ae.Encode()
		if err != nil {
			return netlink.Message{}, wrap(r.op, err)
		}
		data = b
	}
	flags := netlink.Request
	if r.dump {
		flags |= netlink.Dump
	}
	if r.ack {
		flags |= netlink.Acknowledge
	}
	return netlink.Message{
		Header: netlink.Header{Type: netlink.HeaderType(nlabi.GetType(nlabi.RDMA_NL_NLDEV, r.cmd)), Flags: flags},
		Data:   data,
	}, nil
}
