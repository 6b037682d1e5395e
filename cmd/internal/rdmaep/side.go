package rdmaep

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/rdmastack/rdmastack/cmd/internal/cmnode"
	"github.com/rdmastack/rdmastack/rdma"
	"github.com/rdmastack/rdmastack/uverbs"
	"github.com/rdmastack/rdmastack/uverbs/membuf"
)

// msgLen is the size of both messages.
const msgLen = 16

// epOptions are both programs' ibv_qp_init_attr: one work request and
// SGE each way, 16 bytes inline, every send signalled.
var epOptions = rdma.EPOptions{
	Cap:      uverbs.QPCap{MaxSendWR: 1, MaxRecvWR: 1, MaxSendSGE: 1, MaxRecvSGE: 1, MaxInlineData: msgLen},
	SQSigAll: true,
}

// side is one program's run: its endpoint, messages and memory.
type side struct {
	name           string
	cfg            *config
	stdout, stderr io.Writer

	id               *rdma.ID
	send, recv       *membuf.Buffer
	sendMR, recvMR   *membuf.MR
	inline           bool
	sendsSeen, recvs int // completions taken from the shared CQ ahead of their wait
}

func (s *side) perror(what string, err error) { fmt.Fprintln(s.stderr, cmnode.Perror(what, err)) }

// gaiError reports a failed rdma_getaddrinfo and returns its code.
func (s *side) gaiError(le *cmnode.LookupError) int {
	fmt.Fprintf(s.stdout, "rdma_getaddrinfo: %s\n", le.Text)
	return le.Code
}

// lookup is both programs' rdma_getaddrinfo of -s and -p (passive on
// the server); a failure is reported, with its code as the status.
func (s *side) lookup(passive bool) (string, int) {
	addr, le := cmnode.AddrHints{Port: s.cfg.port}.Lookup(s.cfg.server, passive)
	if le != nil {
		return "", s.gaiError(le)
	}
	return addr.String(), 0
}

// prepare is what both programs do with a new endpoint before
// connecting or accepting: the inline choice, the messages registered
// and the receive posted.
func (s *side) prepare() int {
	s.setInline()
	if ret := s.regMsgs(); ret != 0 {
		return ret
	}
	return s.postRecv()
}

// setInline chooses inline sends when the QP takes 16 bytes inline.
func (s *side) setInline() {
	if s.id.QP().Cap().MaxInlineData >= msgLen {
		s.inline = true
		return
	}
	fmt.Fprintf(s.stdout, "%s: device doesn't support IBV_SEND_INLINE, using sge sends\n", s.name)
}

// regMsgs is rdma_reg_msgs for both messages (the send one only without
// inline sends; inline data is copied from the buffer when posted).
func (s *side) regMsgs() int {
	var err error
	if s.recv, err = membuf.New(msgLen); err == nil {
		s.recvMR, err = s.recv.Register(s.id.PD(), uverbs.AccessLocalWrite)
	}
	if err != nil {
		s.perror("rdma_reg_msgs for recv_msg", err)
		return -1
	}
	if s.send, err = membuf.New(msgLen); err == nil && !s.inline {
		s.sendMR, err = s.send.Register(s.id.PD(), uverbs.AccessLocalWrite)
	}
	if err != nil {
		s.perror("rdma_reg_msgs for send_msg", err)
		return -1
	}
	return 0
}

// postRecv is rdma_post_recv of the receive message.
func (s *side) postRecv() int {
	wr := &uverbs.RecvWR{SGE: []uverbs.SGE{{Addr: s.recv.Addr(0), Length: msgLen, LKey: s.recvMR.LKey()}}}
	if err := s.id.QP().PostRecv(wr); err != nil {
		s.perror("rdma_post_recv", err)
		return -1
	}
	return 0
}

// postSend is rdma_post_send of the send message.
func (s *side) postSend() int {
	wr := &uverbs.SendWR{Opcode: uverbs.OpSend, SGE: []uverbs.SGE{{Addr: s.send.Addr(0), Length: msgLen}}}
	if s.inline {
		wr.Flags = uverbs.SendInline
	} else {
		wr.SGE[0].LKey = s.sendMR.LKey()
	}
	if err := s.id.QP().PostSend(wr); err != nil {
		s.perror("rdma_post_send", err)
		return -1
	}
	return 0
}

// waitComp is rdma_get_send_comp or rdma_get_recv_comp: the next
// completion of that queue. librdmacm gives an endpoint a CQ per queue;
// ours share one, so a completion of the other queue that comes first is
// counted for its own wait. A completion with an error status fails the
// wait (the C programs do not look at the status).
func (s *side) waitComp(recv bool) int {
	what := "rdma_get_send_comp"
	if recv {
		what = "rdma_get_recv_comp"
	}
	for {
		if recv && s.recvs > 0 {
			s.recvs--
			return 0
		}
		if !recv && s.sendsSeen > 0 {
			s.sendsSeen--
			return 0
		}
		wc, err := poll(context.Background(), s.id.CQ())
		if err != nil {
			s.perror(what, err)
			return -1
		}
		if wc.Status != uverbs.WCSuccess {
			fmt.Fprintf(s.stderr, "%s: completion error: %v\n", what, wc.Status)
			return -1
		}
		if wc.Opcode&uverbs.WCRecv != 0 {
			s.recvs++
		} else {
			s.sendsSeen++
		}
	}
}

// poll busy-polls cq, yielding between tries: the endpoint's CQ has no
// completion channel, and one message each way is all these programs
// wait for.
func poll(ctx context.Context, cq *uverbs.CQ) (uverbs.WC, error) {
	var wc [1]uverbs.WC
	for {
		n, err := cq.Poll(wc[:])
		if err != nil || n == 1 {
			return wc[0], err
		}
		if err := ctx.Err(); err != nil {
			return uverbs.WC{}, err
		}
		time.Sleep(20 * time.Microsecond)
	}
}

// close frees the messages, then the endpoint.
func (s *side) close() {
	for _, mr := range []*membuf.MR{s.sendMR, s.recvMR} {
		if mr != nil {
			mr.Close()
		}
	}
	for _, b := range []*membuf.Buffer{s.send, s.recv} {
		if b != nil {
			b.Close()
		}
	}
	if s.id != nil {
		s.id.Close()
	}
}
