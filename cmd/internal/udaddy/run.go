// Package udaddy is the engine of cmd/udaddy, a drop-in for rdma-core's
// udaddy (librdmacm/examples/udaddy.c, v44): -c UD "connections" made by
// SIDR over rdma_cm on port 7174, on each of which the client sends -C
// SEND_WITH_IMM datagrams of -S bytes (the immediate data is its QPN)
// and the server answers with as many, addressed from the first receive
// completion and its GRH (uverbs.PD.CreateAHFromWC). Same options,
// output lines and exit statuses, so either side can be rdma-core's.
//
// Its structure is cmatose's (cmd/internal/cmatose), but the data path
// is UD, there is no disconnect phase and the handlers differ; what is
// the same in udaddy.c and mckey.c (the node) is cmd/internal/udnode.
package udaddy

import (
	"context"
	"fmt"
	"io"
	"net/netip"
	"time"

	"github.com/rdmastack/rdmastack/cmd/internal/cmnode"
	"github.com/rdmastack/rdmastack/cmd/internal/udnode"
	"github.com/rdmastack/rdmastack/rdma"
	"github.com/rdmastack/rdmastack/uverbs"
)

const resolveTimeout = 2000 * time.Millisecond

// Main runs udaddy with args (the words after the program name); prog
// is the name it reports itself by (C's argv[0]).
func Main(prog string, stdout, stderr io.Writer, args []string) error {
	c, err := parse(prog, stdout, stderr, args)
	if err != nil {
		return err
	}
	t := &test{cfg: c, byID: make(map[*rdma.ID]*udnode.Node),
		ud: &udnode.Test{Prog: "udaddy", Stdout: stdout, Stderr: stderr, Size: c.Size, Count: c.Count}}
	if ret := t.main(); ret != 0 {
		return &cmnode.ExitError{Code: ret}
	}
	return nil
}

// test is struct cmatest.
type test struct {
	cfg          *config
	ud           *udnode.Test
	ch           *rdma.EventChannel
	nodes        []*udnode.Node
	byID         map[*rdma.ID]*udnode.Node
	connIndex    int
	connectsLeft int
	src, dst     netip.AddrPort
}

func (t *test) printf(format string, a ...any) { fmt.Fprintf(t.ud.Stdout, format, a...) }

func (t *test) main() int {
	t.connectsLeft = t.cfg.Connections
	return t.ud.Run(t.allocNodes, func() int {
		if t.cfg.dst != "" {
			return t.runClient()
		}
		return t.runServer()
	})
}

// allocNodes makes the nodes on ch, and on a client their ids.
func (t *test) allocNodes(ch *rdma.EventChannel) ([]*udnode.Node, bool) {
	t.ch = ch
	t.nodes = make([]*udnode.Node, max(t.cfg.Connections, 0))
	for i := range t.nodes {
		n := &udnode.Node{}
		t.nodes[i] = n
		if t.cfg.dst == "" {
			continue
		}
		id, err := ch.CreateID(t.cfg.ps, cmnode.QPType(t.cfg.ps))
		if err != nil {
			for _, m := range t.nodes[:i] {
				m.ID.Close()
			}
			return nil, false
		}
		n.ID = id
		t.byID[id] = n
	}
	return t.nodes, true
}

func (t *test) addrHandler(n *udnode.Node) int {
	if t.cfg.setTOS {
		if err := n.ID.SetOption(rdma.OptionTOS, int(t.cfg.tos)); err != nil {
			t.ud.Perror("udaddy: set TOS option failed", err)
		}
	}
	if err := n.ID.ResolveRoute(context.Background(), resolveTimeout); err != nil {
		t.ud.Perror("udaddy: resolve route failed", err)
		t.connectsLeft--
		return -1
	}
	return 0
}

func (t *test) routeHandler(n *udnode.Node) int {
	ret := t.ud.VerifyParams(n)
	if ret == 0 {
		ret = t.ud.Init(n)
	}
	if ret == 0 {
		ret = t.ud.PostRecvs(n)
	}
	if ret == 0 {
		// A zeroed rdma_conn_param: no private data over IP.
		if err := n.ID.Connect(context.Background(), &rdma.ConnParam{}); err != nil {
			t.ud.Perror("udaddy: failure connecting", err)
			ret = -1
		}
	}
	if ret != 0 {
		t.connectsLeft--
	}
	return ret
}

func (t *test) connectHandler(id *rdma.ID) int {
	var ret int
	if t.connIndex == len(t.nodes) {
		ret = -12 // -ENOMEM
	} else {
		n := t.nodes[t.connIndex]
		t.connIndex++
		n.ID = id
		t.byID[id] = n
		ret = t.ud.VerifyParams(n)
		if ret == 0 {
			ret = t.ud.Init(n)
		}
		if ret == 0 {
			ret = t.ud.PostRecvs(n)
		}
		if ret == 0 {
			if err := id.Accept(context.Background(), &rdma.ConnParam{QPNum: n.Res.QP.Num()}); err != nil {
				t.ud.Perror("udaddy: failure accepting", err)
				ret = -1
			}
		}
		if ret == 0 {
			n.Connected = true
			t.connectsLeft--
			return 0
		}
		// The C program leaks the node's resources and the id here;
		// ours go with the id below.
		if n.Res != nil {
			n.Res.Close()
			n.Res = nil
		}
		n.ID = nil
		t.connectsLeft--
	}
	t.printf("udaddy: failing connection request\n")
	id.Reject(nil)
	id.Close()
	return ret
}

// resolvedHandler is the client's ESTABLISHED: the server's QPN, Q_Key
// and address.
func (t *test) resolvedHandler(n *udnode.Node, ev *rdma.Event) int {
	return t.ud.Resolved(n, &ev.Peer, &t.connectsLeft)
}

// handle is cma_handler.
func (t *test) handle(ev *rdma.Event) int {
	n := t.byID[ev.ID]
	switch ev.Type {
	case rdma.EventAddrResolved:
		return t.addrHandler(n)
	case rdma.EventRouteResolved:
		return t.routeHandler(n)
	case rdma.EventConnectRequest:
		return t.connectHandler(ev.ID)
	case rdma.EventEstablished:
		return t.resolvedHandler(n, ev)
	case rdma.EventAddrError, rdma.EventRouteError, rdma.EventConnectError, rdma.EventUnreachable, rdma.EventRejected:
		t.connectsLeft--
		return cmnode.EventError(t.ud.Stdout, "udaddy", ev)
	}
	return 0
}

// connectEvents handles events until every connection is made or has
// failed, or one handler fails.
func (t *test) connectEvents() int { return udnode.ConnectEvents(t.ch, &t.connectsLeft, t.handle) }

// pollCQs is poll_cqs: count completions of every connected node; on a
// server the first one of a node without an address handle makes the
// reply's (create_reply_ah).
func (t *test) pollCQs() int {
	for _, n := range t.nodes {
		if !n.Connected {
			continue
		}
		var first func(*uverbs.WC) int
		if n.AH == nil {
			first = func(wc *uverbs.WC) int { return t.createReplyAH(n, wc) }
		}
		if ret := t.ud.Poll(context.Background(), n, first); ret != 0 {
			return ret
		}
	}
	return 0
}

// createReplyAH addresses the replies to where the datagram came from:
// the AH from its completion and GRH, the QPN from its immediate data,
// the Q_Key our QP's.
func (t *test) createReplyAH(n *udnode.Node, wc *uverbs.WC) int {
	ah, err := n.Res.PD.CreateAHFromWC(uint8(n.ID.Port()), wc, n.Buf.Bytes()[:uverbs.GRHLen])
	if err == nil {
		n.AH, n.RemoteQPN = ah, wc.Imm
		var attr *uverbs.QPAttr
		if attr, err = n.Res.QP.Query(uverbs.QPAttrQKey); err == nil {
			n.RemoteQKey = attr.QKey
		}
	}
	if err != nil {
		t.printf("udaddy: failed to create reply AH\n")
		return -1
	}
	return 0
}

func (t *test) runServer() int {
	t.printf("udaddy: starting server\n")
	listen, err := t.ch.CreateID(t.cfg.ps, cmnode.QPType(t.cfg.ps))
	if err != nil {
		t.ud.Perror("udaddy: listen request failed", err)
		return -1
	}
	defer listen.Close()
	var le *cmnode.LookupError
	if t.src, _, le = t.cfg.hints.GetRDMAAddr(t.cfg.src, "", true); le != nil {
		t.printf("udaddy: getrdmaaddr error: %s\n", le.Text)
		return le.Code
	}
	if err := listen.Bind(t.src); err != nil {
		t.ud.Perror("udaddy: bind address failed", err)
		return -1
	}
	if err := listen.Listen(0); err != nil {
		t.ud.Perror("udaddy: failure trying to listen", err)
		return -1
	}
	t.connectEvents() // its status is not the server's, as in the C program
	if t.ud.Count == 0 {
		return 0
	}
	t.printf("receiving data transfers\n")
	if ret := t.pollCQs(); ret != 0 {
		return ret
	}
	t.printf("sending replies\n")
	for _, n := range t.nodes {
		if ret := t.ud.PostSends(n, true); ret != 0 {
			return ret
		}
	}
	if ret := t.pollCQs(); ret != 0 {
		return ret
	}
	t.printf("data transfers complete\n")
	return 0
}

func (t *test) runClient() int {
	t.printf("udaddy: starting client\n")
	var le *cmnode.LookupError
	if t.src, t.dst, le = t.cfg.hints.GetRDMAAddr(t.cfg.src, t.cfg.dst, false); le != nil {
		t.printf("udaddy: getaddrinfo error: %s\n", le.Text)
		return le.Code
	}
	t.printf("udaddy: connecting\n")
	for _, n := range t.nodes {
		if err := n.ID.ResolveAddr(context.Background(), t.src, t.dst, resolveTimeout); err != nil {
			t.ud.Perror("udaddy: failure getting addr", err)
			t.connectsLeft--
			return -1
		}
	}
	if ret := t.connectEvents(); ret != 0 {
		return ret
	}
	if t.ud.Count == 0 {
		return 0
	}
	t.printf("initiating data transfers\n")
	for _, n := range t.nodes {
		if ret := t.ud.PostSends(n, false); ret != 0 {
			return ret
		}
	}
	t.printf("receiving data transfers\n")
	if ret := t.pollCQs(); ret != 0 {
		return ret
	}
	t.printf("data transfers complete\n")
	return 0
}
