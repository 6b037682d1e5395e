// Package udnode is the UD connection node that rdma-core's udaddy.c
// and mckey.c share (their identical struct cmatest_node, create_message,
// verify_test_params, init_node, post_recvs and post_sends): a UD QP on
// an rdma_cm id, one CQ for both queues, a message buffer with room for
// the 40-byte GRH, and the address handle, QPN and Q_Key sends go to.
// Messages it prints carry the program's name, as the C ones do.
package udnode

import (
	"context"
	"fmt"
	"io"

	"github.com/rdmastack/rdmastack/cmd/internal/cmnode"
	"github.com/rdmastack/rdmastack/ib"
	"github.com/rdmastack/rdmastack/rdma"
	"github.com/rdmastack/rdmastack/uverbs"
	"github.com/rdmastack/rdmastack/uverbs/membuf"
)

// Test is what every node of one run shares: the program's name, where
// it prints, and the message size and count (-S, -C; a size of 0 makes
// the count 0, as create_message does).
type Test struct {
	Prog           string
	Stdout, Stderr io.Writer
	Size, Count    int
}

func (t *Test) printf(format string, a ...any) { fmt.Fprintf(t.Stdout, format, a...) }

// Perror prints perror(3)'s line for what and err on stderr.
func (t *Test) Perror(what string, err error) {
	fmt.Fprintln(t.Stderr, cmnode.Perror(what, err))
}

// Node is one UD endpoint (struct cmatest_node).
type Node struct {
	ID         *rdma.ID
	Res        *cmnode.Node
	Buf        *membuf.Buffer // Size + GRHLen bytes
	MR         *membuf.MR
	AH         *uverbs.AH
	RemoteQPN  uint32
	RemoteQKey uint32
	Connected  bool
}

// VerifyParams is verify_test_params: messages must fit the port's
// active MTU.
func (t *Test) VerifyParams(n *Node) int {
	dev := n.ID.Device()
	if dev == nil {
		return -1
	}
	ctx, err := dev.Context()
	if err != nil {
		return -1
	}
	pa, err := ctx.QueryPort(n.ID.Port())
	if err != nil {
		return int(-cmnode.Errno(err))
	}
	if mtu := pa.ActiveMTU.Bytes(); t.Count != 0 && t.Size > mtu {
		t.printf("%s: message_size %d is larger than active mtu %d\n", t.Prog, t.Size, mtu)
		return -22 // -EINVAL
	}
	return 0
}

// Init is init_node: PD, a CQ of 2×count entries (2 without messages),
// the id's UD QP (count work requests each way, sends signalled only when
// asked) and the message buffer.
func (t *Test) Init(n *Node) int {
	wr := uint32(max(t.Count, 1))
	cqe := 2
	if t.Count != 0 {
		cqe = t.Count * 2
	}
	res, err := cmnode.NewNode(n.ID, cmnode.NodeConfig{QPType: ib.QPTypeUD, CQE: cqe, CompChannel: true,
		Cap: uverbs.QPCap{MaxSendWR: wr, MaxRecvWR: wr, MaxSendSGE: 1, MaxRecvSGE: 1}})
	if err != nil {
		t.Perror(t.Prog+": unable to create QP", err)
		return -1
	}
	n.Res = res
	if t.Size == 0 {
		t.Count = 0
	}
	if t.Count == 0 {
		return 0
	}
	if n.Buf, n.MR, err = res.Buffer(t.Size+uverbs.GRHLen, uverbs.AccessLocalWrite); err != nil {
		t.printf("failed to reg MR\n")
		t.printf("%s: failed to create messages: %d\n", t.Prog, -1)
		return -1
	}
	return 0
}

// PostRecvs posts count receives of Size+GRHLen bytes, all into the one
// buffer.
func (t *Test) PostRecvs(n *Node) int {
	if t.Count == 0 {
		return 0
	}
	wr := &uverbs.RecvWR{SGE: []uverbs.SGE{{Addr: n.Buf.Addr(0), Length: uint32(t.Size + uverbs.GRHLen), LKey: n.MR.LKey()}}}
	for range t.Count {
		if err := n.Res.QP.PostRecv(wr); err != nil {
			t.printf("failed to post receives: %d\n", cmnode.Errno(err))
			return int(cmnode.Errno(err))
		}
	}
	return 0
}

// PostSends posts count SEND_WITH_IMMs of Size bytes to the node's
// remote (AH, QPN, Q_Key), the immediate data being our QPN.
func (t *Test) PostSends(n *Node, signaled bool) int {
	if !n.Connected || t.Count == 0 {
		return 0
	}
	wr := &uverbs.SendWR{Opcode: uverbs.OpSendWithImm, Imm: n.Res.QP.Num(),
		SGE: []uverbs.SGE{{Addr: n.Buf.Addr(0), Length: uint32(t.Size), LKey: n.MR.LKey()}},
		AH:  n.AH, RemoteQPN: n.RemoteQPN, RemoteQKey: n.RemoteQKey}
	if signaled {
		wr.Flags = uverbs.SendSignaled
	}
	for range t.Count {
		if err := n.Res.QP.PostSend(wr); err != nil {
			t.printf("failed to post sends: %d\n", cmnode.Errno(err))
			return int(cmnode.Errno(err))
		}
	}
	return 0
}

// Poll waits for count completions of the node's CQ (poll_cqs for one
// node), calling first with the first one. Unlike the C programs, which
// count completions whatever their status, a failed one ends the wait
// with "<prog>: completion error: <status>".
func (t *Test) Poll(ctx context.Context, n *Node, first func(*uverbs.WC) int) int {
	for i := range t.Count {
		wc, err := n.Res.Wait(ctx, n.Res.SendCQ)
		if err != nil {
			t.printf("%s: failed polling CQ: %d\n", t.Prog, -int(cmnode.Errno(err)))
			return -int(cmnode.Errno(err))
		}
		if wc.Status != uverbs.WCSuccess {
			t.printf("%s: completion error: %v\n", t.Prog, wc.Status)
			return -5 // -EIO
		}
		if i == 0 && first != nil {
			if ret := first(&wc); ret != 0 {
				return ret
			}
		}
	}
	return 0
}

// CreateAH makes the node's address handle from an event's attributes
// and takes its QPN and Q_Key (the ESTABLISHED and MULTICAST_JOIN
// handlers).
func (t *Test) CreateAH(n *Node, p *rdma.PeerParam) int {
	ah, err := n.Res.PD.CreateAH(p.AH)
	if err != nil {
		return -1
	}
	n.AH, n.RemoteQPN, n.RemoteQKey = ah, p.QPNum, p.QKey
	return 0
}

// Resolved ends a node's connect phase on its peer's attributes
// (udaddy's ESTABLISHED, mckey's MULTICAST_JOIN): the address handle
// made, or its failure printed, and one connection fewer left to wait
// for. It returns the handler's C value.
func (t *Test) Resolved(n *Node, p *rdma.PeerParam, left *int) int {
	*left--
	if t.CreateAH(n, p) != 0 {
		t.printf("%s: failure creating address handle\n", t.Prog)
		return -1
	}
	n.Connected = true
	return 0
}

// Destroy is destroy_node: the AH, the verbs resources, then the id.
func (n *Node) Destroy() {
	if n.AH != nil {
		n.AH.Close()
	}
	if n.Res != nil {
		n.Res.Close()
	} else if n.ID != nil {
		n.ID.Close()
	}
}
