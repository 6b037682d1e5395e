package nldev

import (
	"encoding/binary"
	"testing"

	"github.com/mdlayher/netlink"
	"github.com/mdlayher/netlink/nltest"
	"golang.org/x/sys/unix"
)

// fakeKernel answers requests with fn, filling in what the kernel would:
// the request's sequence and port id, NLM_F_MULTI and a closing NLMSG_DONE
// for dumps, and an NLMSG_ERROR carrying the request for errors.
type fakeKernel func(req netlink.Message) ([]netlink.Message, unix.Errno)

func dialFake(t *testing.T, fn fakeKernel) *Client {
	t.Helper()
	c := newClient(nltest.Dial(func(reqs []netlink.Message) ([]netlink.Message, error) {
		// Several requests in one datagram are answered in turn, as the
		// kernel does; the fake delivers all the answers at once.
		var all []netlink.Message
		for _, req := range reqs {
			all = append(all, answer(fn, req)...)
		}
		return all, nil
	}))
	t.Cleanup(func() { c.Close() })
	return c
}

// answer is the fake kernel's reply to one request.
func answer(fn fakeKernel, req netlink.Message) []netlink.Message {
	msgs, errno := fn(req)
	if errno != 0 {
		return []netlink.Message{kernelError(req, errno)}
	}
	if req.Header.Flags&netlink.Dump != 0 {
		for i := range msgs {
			msgs[i].Header.Flags |= netlink.Multi
		}
		msgs = append(msgs, netlink.Message{
			Header: netlink.Header{Type: netlink.Done, Flags: netlink.Multi},
			Data:   make([]byte, 4),
		})
	}
	for i := range msgs {
		msgs[i].Header.Sequence = req.Header.Sequence
		msgs[i].Header.PID = req.Header.PID
	}
	return msgs
}

// kernelError builds the NLMSG_ERROR reply netlink_ack sends: the negative
// errno followed by the request's header and payload.
func kernelError(req netlink.Message, errno unix.Errno) netlink.Message {
	req.Header.Length = uint32(16 + len(req.Data))
	b, _ := req.MarshalBinary()
	data := binary.NativeEndian.AppendUint32(nil, uint32(-int32(errno)))
	return netlink.Message{
		Header: netlink.Header{Type: netlink.Error, Sequence: req.Header.Sequence, PID: req.Header.PID},
		Data:   append(data, b...),
	}
}

// kernelErrorExtAck is kernelError with the extended-acknowledgement
// message a policy failure carries (NLM_F_CAPPED | NLM_F_ACK_TLVS, then an
// NLMSGERR_ATTR_MSG attribute after the request's header).
func kernelErrorExtAck(req netlink.Message, errno unix.Errno, msg string) netlink.Message {
	req.Header.Length = 16
	hdr, _ := (netlink.Message{Header: req.Header}).MarshalBinary()
	ae := netlink.NewAttributeEncoder()
	ae.String(unix.NLMSGERR_ATTR_MSG, msg)
	tlvs, _ := ae.Encode()
	data := binary.NativeEndian.AppendUint32(nil, uint32(-int32(errno)))
	data = append(data, hdr...)
	return netlink.Message{
		Header: netlink.Header{Type: netlink.Error, Flags: netlink.Capped | netlink.AcknowledgeTLVs,
			Sequence: req.Header.Sequence, PID: req.Header.PID},
		Data: append(data, tlvs...),
	}
}
