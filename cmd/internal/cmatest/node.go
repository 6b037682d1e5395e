package cmatest

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

// Test is struct cmatest: what every node of one run shares. Prog is
// the program's name, in what it prints; Size and Count are -S and -C
// (a size of 0 makes the count 0, as create_message does). Type is the
// nodes' QP type: ib.QPTypeRC is cmatose.c's node (a send and a receive
// CQ, every send signalled, plain SENDs of Size bytes), ib.QPTypeUD
// udaddy.c's and mckey.c's (one CQ for both queues, SEND_WITH_IMMs to an
// address handle, each receive with room for the 40-byte GRH).
type Test struct {
	Prog           string
	Stdout, Stderr io.Writer
	Size, Count    int
	Type           ib.QPType

	Ch    *rdma.EventChannel // the run's event channel (Run makes it; cmatose's -m replaces it)
	Nodes []*Node            // the run's nodes (AllocNodes), which Run destroys
	ByID  map[*rdma.ID]*Node // the nodes with an id, by it
	Comp  cmnode.Channels    // the nodes' completion channels, one per device
	next  int                // the node the next connection request takes (Accept)
}

// Printf prints on Stdout.
func (t *Test) Printf(format string, a ...any) { fmt.Fprintf(t.Stdout, format, a...) }

// Perror prints perror(3)'s line for what and err on stderr.
func (t *Test) Perror(what string, err error) {
	fmt.Fprintln(t.Stderr, cmnode.Perror(what, err))
}

// Node is one endpoint (struct cmatest_node): its id, verbs resources
// and message buffer, and on UD where its sends go.
type Node struct {
	ID         *rdma.ID
	Res        *cmnode.Node
	Buf        *membuf.Buffer // Size bytes, and GRHLen more on UD
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
		t.Printf("%s: message_size %d is larger than active mtu %d\n", t.Prog, t.Size, mtu)
		return -22 // -EINVAL
	}
	return 0
}

// Init is init_node: PD, CQs, the id's QP and the message buffer. RC
// (cmatose.c): a send and a receive CQ of max(count, 1) entries and
// every send signalled. UD (udaddy.c, mckey.c): one CQ of 2×count
// entries (2 without messages), sends signalled only when asked. Both:
// count work requests each way (at least 1), one SGE.
func (t *Test) Init(n *Node) int {
	wr := uint32(max(t.Count, 1))
	cfg := cmnode.NodeConfig{QPType: t.Type, CompChannel: true, Shared: &t.Comp,
		Cap: uverbs.QPCap{MaxSendWR: wr, MaxRecvWR: wr, MaxSendSGE: 1, MaxRecvSGE: 1}}
	if t.ud() {
		cfg.CQE = 2
		if t.Count != 0 {
			cfg.CQE = t.Count * 2
		}
	} else {
		cfg.CQE, cfg.SplitCQs, cfg.SigAll = int(wr), true, true
	}
	res, err := cmnode.NewNode(n.ID, cfg)
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
	if n.Buf, n.MR, err = res.Buffer(t.msgLen(), uverbs.AccessLocalWrite); err != nil {
		t.Printf("failed to reg MR\n")
		t.Printf("%s: failed to create messages: %d\n", t.Prog, -1)
		return -1
	}
	return 0
}

func (t *Test) ud() bool { return t.Type == ib.QPTypeUD }

// msgLen is what a receive takes: the message, after the GRH on UD.
func (t *Test) msgLen() int {
	if t.ud() {
		return t.Size + uverbs.GRHLen
	}
	return t.Size
}

// PostRecvs posts count receives of a message (and its GRH on UD), all
// into the one buffer.
func (t *Test) PostRecvs(n *Node) int {
	if t.Count == 0 {
		return 0
	}
	wr := &uverbs.RecvWR{SGE: []uverbs.SGE{{Addr: n.Buf.Addr(0), Length: uint32(t.msgLen()), LKey: n.MR.LKey()}}}
	for range t.Count {
		if err := n.Res.QP.PostRecv(wr); err != nil {
			t.Printf("failed to post receives: %d\n", cmnode.Errno(err))
			return int(cmnode.Errno(err))
		}
	}
	return 0
}

// PostSends posts count messages of Size bytes on a connected node: on
// RC SENDs (all signalled by the QP), on UD SEND_WITH_IMMs to the
// node's remote (AH, QPN, Q_Key), the immediate data being our QPN,
// signalled when asked.
func (t *Test) PostSends(n *Node, signaled bool) int {
	if !n.Connected || t.Count == 0 {
		return 0
	}
	wr := &uverbs.SendWR{Opcode: uverbs.OpSend, SGE: []uverbs.SGE{{Addr: n.Buf.Addr(0), Length: uint32(t.Size), LKey: n.MR.LKey()}}}
	if t.ud() {
		wr.Opcode, wr.Imm = uverbs.OpSendWithImm, n.Res.QP.Num()
		wr.AH, wr.RemoteQPN, wr.RemoteQKey = n.AH, n.RemoteQPN, n.RemoteQKey
		if signaled {
			wr.Flags = uverbs.SendSignaled
		}
	}
	for range t.Count {
		if err := n.Res.QP.PostSend(wr); err != nil {
			t.Printf("failed to post sends: %d\n", cmnode.Errno(err))
			return int(cmnode.Errno(err))
		}
	}
	return 0
}

// Poll waits for count completions of a UD node's CQ (poll_cqs for one
// node), calling first with the first one. Unlike the C programs, which
// count completions whatever their status, a failed one ends the wait
// with "<prog>: completion error: <status>".
func (t *Test) Poll(ctx context.Context, n *Node, first func(*uverbs.WC) int) int {
	for i := range t.Count {
		wc, err := n.Res.Wait(ctx, n.Res.SendCQ)
		if err != nil {
			t.Printf("%s: failed polling CQ: %d\n", t.Prog, -int(cmnode.Errno(err)))
			return -int(cmnode.Errno(err))
		}
		if wc.Status != uverbs.WCSuccess {
			t.Printf("%s: completion error: %v\n", t.Prog, wc.Status)
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
		t.Printf("%s: failure creating address handle\n", t.Prog)
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
