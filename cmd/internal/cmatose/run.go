// Package cmatose is the engine of cmd/ucmatose, a drop-in for
// rdma-core's ucmatose (librdmacm/examples/cmatose.c, v44): -c RC
// connections over rdma_cm (port 7471), on each of which the server
// sends -C messages of -S bytes once all are ESTABLISHED and the client
// answers with as many, then the server disconnects. Same options,
// output lines and exit statuses, so either side can be rdma-core's.
package cmatose

import (
	"context"
	"io"

	"github.com/rdmastack/rdmastack/cmd/internal/cmatest"
	"github.com/rdmastack/rdmastack/cmd/internal/cmnode"
	"github.com/rdmastack/rdmastack/ib"
	"github.com/rdmastack/rdmastack/rdma"
)

// Main runs ucmatose with args (the words after the program name); prog
// is the name it reports itself by (C's argv[0]).
func Main(prog string, stdout, stderr io.Writer, args []string) error {
	c, err := parse(prog, stdout, stderr, args)
	if err != nil {
		return err
	}
	t := &test{cfg: c, Test: &cmatest.Test{Prog: "cmatose", Stdout: stdout, Stderr: stderr,
		Size: c.Size, Count: c.Count, Type: ib.QPTypeRC}}
	t.handlers = cmatest.Handlers{rdma.EventAddrResolved: t.addrHandler, rdma.EventRouteResolved: t.routeHandler,
		rdma.EventConnectRequest: t.connectHandler, rdma.EventEstablished: t.established,
		rdma.EventDisconnected: t.disconnected}
	return cmnode.Return(t.main())
}

// test is cmatose's run: the counts the event loops run down.
type test struct {
	*cmatest.Test
	cfg             *config
	handlers        cmatest.Handlers
	connectsLeft    int
	disconnectsLeft int
	extra           []*rdma.EventChannel // a failed migration's channels
}

func (t *test) main() int {
	t.connectsLeft = t.cfg.Connections
	ret := t.Run(func() bool {
		return t.AllocNodes(t.cfg.Connections, t.cfg.Client(), t.cfg.ps, ib.QPTypeRC)
	}, func() int {
		if t.cfg.Client() {
			return t.runClient()
		}
		return t.runServer()
	})
	for _, c := range t.extra {
		c.Close()
	}
	return ret
}

// prepare is what a node needs before its connection: the node made
// and its receives posted.
func (t *test) prepare(n *cmatest.Node) int {
	ret := t.Init(n)
	if ret == 0 {
		ret = t.PostRecvs(n)
	}
	return ret
}

// pollCQs takes count completions (of any status, as the C program
// counts them) from the send or receive CQ of every connected node.
func (t *test) pollCQs(recv bool) int {
	for _, n := range t.Nodes {
		if !n.Connected {
			continue
		}
		cq := n.Res.SendCQ
		if recv {
			cq = n.Res.RecvCQ
		}
		for range t.Count {
			if _, err := n.Res.Wait(context.Background(), cq); err != nil {
				t.Printf("cmatose: failed polling CQ: %d\n", -int(cmnode.Errno(err)))
				return -int(cmnode.Errno(err))
			}
		}
	}
	return 0
}

// postSends posts every connected node's messages.
func (t *test) postSends() int {
	for _, n := range t.Nodes {
		if ret := t.PostSends(n, true); ret != 0 {
			return ret
		}
	}
	return 0
}

// setOptions sets -t's type of service (before route resolution) and
// -a's ACK timeout, as the C program: a failure is reported, not fatal.
func (t *test) setOptions(id *rdma.ID, tos bool) {
	if tos && t.cfg.SetTOS {
		if err := id.SetOption(rdma.OptionTOS, int(t.cfg.TOS)); err != nil {
			t.Perror("cmatose: set TOS option failed", err)
		}
	}
	if t.cfg.setTimeout {
		if err := id.SetOption(rdma.OptionAckTimeout, int(t.cfg.ackTimeout)); err != nil {
			t.Perror("cmatose: set ack timeout option failed", err)
		}
	}
}

func (t *test) addrHandler(n *cmatest.Node, _ *rdma.Event) int {
	t.setOptions(n.ID, true)
	return t.ResolveRoute(n, &t.connectsLeft)
}

func (t *test) routeHandler(n *cmatest.Node, _ *rdma.Event) int {
	param := &rdma.ConnParam{ResponderResources: 1, InitiatorDepth: 1, RetryCount: 5}
	return t.ConnectNode(n, t.prepare, param, &t.connectsLeft)
}

// connectHandler accepts with the node made, -a's option set and its
// receives posted.
func (t *test) connectHandler(_ *cmatest.Node, ev *rdma.Event) int {
	_, ret := t.Accept(ev.ID, func(n *cmatest.Node) int {
		ret := t.Init(n)
		if ret == 0 {
			t.setOptions(n.ID, false)
			ret = t.PostRecvs(n)
		}
		return ret
	}, func(*cmatest.Node) *rdma.ConnParam { return nil }, &t.connectsLeft)
	return ret
}

func (t *test) established(n *cmatest.Node, _ *rdma.Event) int {
	if n != nil {
		n.Connected = true
	}
	t.connectsLeft--
	t.disconnectsLeft++
	return 0
}

func (t *test) disconnected(_ *cmatest.Node, ev *rdma.Event) int {
	ev.ID.Disconnect()
	t.disconnectsLeft--
	return 0
}

// loop is connect_events and disconnect_events: events until *left is
// 0 or one fails.
func (t *test) loop(left *int, phase string) int {
	ret := 0
	for *left > 0 && ret == 0 {
		ev, err := t.Ch.GetEvent(context.Background())
		if err != nil {
			t.Perror("cmatose: failure in rdma_get_cm_event in "+phase+" events", err)
			return int(cmnode.Errno(err))
		}
		ret = t.Handle(ev, t.handlers, &t.connectsLeft)
		ev.Ack()
	}
	return ret
}

// migrateChannel moves the listener (on a server) and every node's id
// to a new event channel, which replaces the old one (rdma_migrate_id).
func (t *test) migrateChannel(listen *rdma.ID) int {
	t.Printf("migrating to new event channel\n")
	ch, err := rdma.CreateEventChannel()
	if err != nil {
		t.Perror("cmatose: failed to create event channel", err)
		return -1
	}
	ids := []*rdma.ID{listen}
	for _, n := range t.Nodes {
		ids = append(ids, n.ID)
	}
	for _, id := range ids {
		if id == nil {
			continue
		}
		if err := id.Migrate(ch); err != nil {
			t.Perror("cmatose: failure migrating to channel", err)
			// The ids moved so far stay on the new channel, which the
			// end closes with the old one.
			t.extra = append(t.extra, ch)
			return -1
		}
	}
	t.Ch.Close()
	t.Ch = ch
	return 0
}

func (t *test) runServer() int {
	t.Printf("cmatose: starting server\n")
	listen, ret := t.Listen(t.cfg.ps, ib.QPTypeRC, t.cfg.Hints, t.cfg.Src)
	if ret != 0 {
		return ret
	}
	defer listen.Close()
	if ret := t.loop(&t.connectsLeft, "connect"); ret != 0 {
		return ret
	}
	if t.Count != 0 {
		t.Printf("initiating data transfers\n")
		if ret := t.postSends(); ret != 0 {
			return ret
		}
		t.Printf("completing sends\n")
		if ret := t.pollCQs(false); ret != 0 {
			return ret
		}
		t.Printf("receiving data transfers\n")
		if ret := t.pollCQs(true); ret != 0 {
			return ret
		}
		t.Printf("data transfers complete\n")
	}
	if t.cfg.migrate {
		if ret := t.migrateChannel(listen); ret != 0 {
			return ret
		}
	}
	t.Printf("cmatose: disconnecting\n")
	for _, n := range t.Nodes {
		if !n.Connected {
			continue
		}
		n.Connected = false
		n.ID.Disconnect()
	}
	ret = t.loop(&t.disconnectsLeft, "disconnect")
	t.Printf("disconnected\n")
	return ret
}

func (t *test) runClient() int {
	t.Printf("cmatose: starting client\n")
	if ret := t.Connect(t.cfg.Hints, t.cfg.Src, t.cfg.Dst, &t.connectsLeft); ret != 0 {
		return ret
	}
	ret := t.loop(&t.connectsLeft, "connect")
	if ret == 0 {
		ret = t.transfer()
		if ret == 0 && t.cfg.migrate {
			if ret = t.migrateChannel(nil); ret != 0 {
				return ret
			}
		}
	}
	if ret2 := t.loop(&t.disconnectsLeft, "disconnect"); ret2 != 0 {
		ret = ret2
	}
	return ret
}

// transfer is the client's data phase: receive, then answer.
func (t *test) transfer() int {
	if t.Count == 0 {
		return 0
	}
	t.Printf("receiving data transfers\n")
	if ret := t.pollCQs(true); ret != 0 {
		return ret
	}
	t.Printf("sending replies\n")
	if ret := t.postSends(); ret != 0 {
		return ret
	}
	t.Printf("data transfers complete\n")
	return 0
}
