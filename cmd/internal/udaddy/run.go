// Package udaddy is the engine of cmd/udaddy, a drop-in for rdma-core's
// udaddy (librdmacm/examples/udaddy.c, v44): -c UD "connections" made by
// SIDR over rdma_cm on port 7174, on each of which the client sends -C
// SEND_WITH_IMM datagrams of -S bytes (the immediate data is its QPN)
// and the server answers with as many, addressed from the first receive
// completion and its GRH (uverbs.PD.CreateAHFromWC). Same options,
// output lines and exit statuses, so either side can be rdma-core's.
//
// What udaddy.c shares with cmatose.c and mckey.c (the run, the node,
// the connection handling) is cmd/internal/cmatest; here are its data
// path and handlers.
package udaddy

import (
	"context"
	"io"

	"github.com/rdmastack/rdmastack/cmd/internal/cmatest"
	"github.com/rdmastack/rdmastack/cmd/internal/cmnode"
	"github.com/rdmastack/rdmastack/ib"
	"github.com/rdmastack/rdmastack/rdma"
	"github.com/rdmastack/rdmastack/uverbs"
)

// Main runs udaddy with args (the words after the program name); prog
// is the name it reports itself by (C's argv[0]).
func Main(prog string, stdout, stderr io.Writer, args []string) error {
	c, err := parse(prog, stdout, stderr, args)
	if err != nil {
		return err
	}
	t := &test{cfg: c, Test: &cmatest.Test{Prog: "udaddy", Stdout: stdout, Stderr: stderr,
		Size: c.Size, Count: c.Count, Type: ib.QPTypeUD}}
	t.handlers = cmatest.Handlers{rdma.EventAddrResolved: t.addrHandler, rdma.EventRouteResolved: t.routeHandler,
		rdma.EventConnectRequest: t.connectHandler, rdma.EventEstablished: t.resolvedHandler}
	return cmnode.Return(t.main())
}

// test is udaddy's run.
type test struct {
	*cmatest.Test
	cfg          *config
	handlers     cmatest.Handlers
	connectsLeft int
}

func (t *test) main() int {
	t.connectsLeft = t.cfg.Connections
	return t.Run(func() bool {
		return t.AllocNodes(t.cfg.Connections, t.cfg.Client(), t.cfg.ps, cmnode.QPType(t.cfg.ps))
	}, func() int {
		if t.cfg.Client() {
			return t.runClient()
		}
		return t.runServer()
	})
}

func (t *test) addrHandler(n *cmatest.Node, _ *rdma.Event) int {
	if t.cfg.SetTOS {
		if err := n.ID.SetOption(rdma.OptionTOS, int(t.cfg.TOS)); err != nil {
			t.Perror("udaddy: set TOS option failed", err)
		}
	}
	return t.ResolveRoute(n, &t.connectsLeft)
}

// prepare is what a node needs before its connection: the parameters
// checked, the node made and its receives posted.
func (t *test) prepare(n *cmatest.Node) int {
	ret := t.VerifyParams(n)
	if ret == 0 {
		ret = t.Init(n)
	}
	if ret == 0 {
		ret = t.PostRecvs(n)
	}
	return ret
}

// routeHandler connects with a zeroed rdma_conn_param: no private data
// over IP.
func (t *test) routeHandler(n *cmatest.Node, _ *rdma.Event) int {
	return t.ConnectNode(n, t.prepare, &rdma.ConnParam{}, &t.connectsLeft)
}

// connectHandler answers a SIDR request with the node's QPN; the node
// is connected at once.
func (t *test) connectHandler(_ *cmatest.Node, ev *rdma.Event) int {
	n, ret := t.Accept(ev.ID, t.prepare, func(n *cmatest.Node) *rdma.ConnParam {
		return &rdma.ConnParam{QPNum: n.Res.QP.Num()}
	}, &t.connectsLeft)
	if ret == 0 {
		n.Connected = true
		t.connectsLeft--
	}
	return ret
}

// resolvedHandler is the client's ESTABLISHED: the server's QPN, Q_Key
// and address.
func (t *test) resolvedHandler(n *cmatest.Node, ev *rdma.Event) int {
	return t.Resolved(n, &ev.Peer, &t.connectsLeft)
}

// connectEvents handles events until every connection is made or has
// failed, or one handler fails.
func (t *test) connectEvents() int {
	return t.ConnectEvents(&t.connectsLeft, func(ev *rdma.Event) int { return t.Handle(ev, t.handlers, &t.connectsLeft) })
}

// pollCQs is poll_cqs: count completions of every connected node; on a
// server the first one of a node without an address handle makes the
// reply's (create_reply_ah).
func (t *test) pollCQs() int {
	for _, n := range t.Nodes {
		if !n.Connected {
			continue
		}
		var first func(*uverbs.WC) int
		if n.AH == nil {
			first = func(wc *uverbs.WC) int { return t.createReplyAH(n, wc) }
		}
		if ret := t.Poll(context.Background(), n, first); ret != 0 {
			return ret
		}
	}
	return 0
}

// createReplyAH addresses the replies to where the datagram came from:
// the AH from its completion and GRH, the QPN from its immediate data,
// the Q_Key our QP's.
func (t *test) createReplyAH(n *cmatest.Node, wc *uverbs.WC) int {
	ah, err := n.Res.PD.CreateAHFromWC(uint8(n.ID.Port()), wc, n.Buf.Bytes()[:uverbs.GRHLen])
	if err == nil {
		n.AH, n.RemoteQPN = ah, wc.Imm
		var attr *uverbs.QPAttr
		if attr, err = n.Res.QP.Query(uverbs.QPAttrQKey); err == nil {
			n.RemoteQKey = attr.QKey
		}
	}
	if err != nil {
		t.Printf("udaddy: failed to create reply AH\n")
		return -1
	}
	return 0
}

func (t *test) runServer() int {
	t.Printf("udaddy: starting server\n")
	listen, ret := t.Listen(t.cfg.ps, cmnode.QPType(t.cfg.ps), t.cfg.Hints, t.cfg.Src)
	if ret != 0 {
		return ret
	}
	defer listen.Close()
	t.connectEvents() // its status is not the server's, as in the C program
	if t.Count == 0 {
		return 0
	}
	t.Printf("receiving data transfers\n")
	if ret := t.pollCQs(); ret != 0 {
		return ret
	}
	t.Printf("sending replies\n")
	for _, n := range t.Nodes {
		if ret := t.PostSends(n, true); ret != 0 {
			return ret
		}
	}
	if ret := t.pollCQs(); ret != 0 {
		return ret
	}
	t.Printf("data transfers complete\n")
	return 0
}

func (t *test) runClient() int {
	t.Printf("udaddy: starting client\n")
	if ret := t.Connect(t.cfg.Hints, t.cfg.Src, t.cfg.Dst, &t.connectsLeft); ret != 0 {
		return ret
	}
	if ret := t.connectEvents(); ret != 0 {
		return ret
	}
	if t.Count == 0 {
		return 0
	}
	t.Printf("initiating data transfers\n")
	for _, n := range t.Nodes {
		if ret := t.PostSends(n, false); ret != 0 {
			return ret
		}
	}
	t.Printf("receiving data transfers\n")
	if ret := t.pollCQs(); ret != 0 {
		return ret
	}
	t.Printf("data transfers complete\n")
	return 0
}
