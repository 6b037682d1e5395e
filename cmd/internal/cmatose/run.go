// Package cmatose is the engine of cmd/ucmatose, a drop-in for
// rdma-core's ucmatose (librdmacm/examples/cmatose.c, v44): -c RC
// connections over rdma_cm (port 7471), on each of which the server
// sends -C messages of -S bytes once all are ESTABLISHED and the client
// answers with as many, then the server disconnects. Same options,
// output lines and exit statuses, so either side can be rdma-core's.
package cmatose

import (
	"context"
	"fmt"
	"io"
	"net/netip"
	"time"

	"golang.org/x/sys/unix"

	"github.com/rdmastack/rdmastack/cmd/internal/cmnode"
	"github.com/rdmastack/rdmastack/ib"
	"github.com/rdmastack/rdmastack/rdma"
	"github.com/rdmastack/rdmastack/uverbs"
	"github.com/rdmastack/rdmastack/uverbs/membuf"
)

const resolveTimeout = 2000 * time.Millisecond

// Main runs ucmatose with args (the words after the program name); prog
// is the name it reports itself by (C's argv[0]).
func Main(prog string, stdout, stderr io.Writer, args []string) error {
	c, err := parse(prog, stdout, stderr, args)
	if err != nil {
		return err
	}
	t := &test{cfg: c, stdout: stdout, stderr: stderr, byID: make(map[*rdma.ID]*node)}
	ret := t.main()
	if ret != 0 {
		return &cmnode.ExitError{Code: ret}
	}
	return nil
}

// node is one connection (struct cmatest_node).
type node struct {
	id        *rdma.ID
	res       *cmnode.Node
	buf       *membuf.Buffer
	mr        *membuf.MR
	connected bool
}

// test is struct cmatest: the channel, the nodes and the counts the
// event loops run down.
type test struct {
	cfg             *config
	stdout, stderr  io.Writer
	ch              *rdma.EventChannel
	nodes           []*node
	byID            map[*rdma.ID]*node
	connIndex       int
	connectsLeft    int
	disconnectsLeft int
	dst, src        netip.AddrPort
	extra           []*rdma.EventChannel // a failed migration's channels
	comp            cmnode.Channels      // the nodes' completion channels, one per device
}

func (t *test) printf(format string, a ...any) { fmt.Fprintf(t.stdout, format, a...) }

func (t *test) perror(what string, err error) {
	fmt.Fprintln(t.stderr, cmnode.Perror(what, err))
}

func (t *test) main() int {
	t.connectsLeft = t.cfg.Connections
	ch, msg, _ := cmnode.CreateChannel()
	if ch == nil {
		fmt.Fprintln(t.stderr, msg)
		return 1
	}
	t.ch = ch
	if t.allocNodes() != 0 {
		ch.Close()
		return 1
	}
	var ret int
	if t.cfg.dst != "" {
		ret = t.runClient()
	} else {
		ret = t.runServer()
	}
	t.printf("test complete\n")
	for _, n := range t.nodes {
		n.destroy()
	}
	t.comp.Close()
	t.ch.Close()
	for _, c := range t.extra {
		c.Close()
	}
	t.printf("return status %d\n", ret)
	return ret
}

func (t *test) allocNodes() int {
	t.nodes = make([]*node, max(t.cfg.Connections, 0))
	for i := range t.nodes {
		n := &node{}
		t.nodes[i] = n
		if t.cfg.dst != "" {
			id, err := t.ch.CreateID(t.cfg.ps, ib.QPTypeRC)
			if err != nil {
				for _, m := range t.nodes[:i] {
					m.id.Close()
				}
				return -1
			}
			n.id = id
			t.byID[id] = n
		}
	}
	return 0
}

func (n *node) destroy() {
	if n.res != nil {
		n.res.Close()
	} else if n.id != nil {
		n.id.Close()
	}
}

// getAddrs is get_rdma_addr: the passive (bind) address on a server,
// the source (when -b) and destination on a client.
func (t *test) getAddrs(passive bool) *cmnode.LookupError {
	var err *cmnode.LookupError
	t.src, t.dst, err = t.cfg.hints.GetRDMAAddr(t.cfg.src, t.cfg.dst, passive)
	return err
}

// initNode is init_node: PD, a send and a receive CQ of max(count, 1)
// entries, the QP (all sends signalled) and the message buffer.
func (t *test) initNode(n *node) int {
	cqe := max(t.cfg.Count, 1)
	res, err := cmnode.NewNode(n.id, cmnode.NodeConfig{CQE: cqe, SplitCQs: true, CompChannel: true, Shared: &t.comp, SigAll: true,
		Cap: uverbs.QPCap{MaxSendWR: uint32(cqe), MaxRecvWR: uint32(cqe), MaxSendSGE: 1, MaxRecvSGE: 1}})
	if err != nil {
		t.perror("cmatose: unable to create QP", err)
		return -1
	}
	n.res = res
	if t.cfg.Size == 0 {
		t.cfg.Count = 0
	}
	if t.cfg.Count == 0 {
		return 0
	}
	if n.buf, n.mr, err = res.Buffer(t.cfg.Size, uverbs.AccessLocalWrite); err != nil {
		t.printf("failed to reg MR\n")
		t.printf("cmatose: failed to create messages: %d\n", -1)
		return -1
	}
	return 0
}

func (t *test) postRecvs(n *node) int {
	if t.cfg.Count == 0 {
		return 0
	}
	wr := &uverbs.RecvWR{SGE: []uverbs.SGE{{Addr: n.buf.Addr(0), Length: uint32(t.cfg.Size), LKey: n.mr.LKey()}}}
	for range t.cfg.Count {
		if err := n.res.QP.PostRecv(wr); err != nil {
			t.printf("failed to post receives: %d\n", cmnode.Errno(err))
			return int(cmnode.Errno(err))
		}
	}
	return 0
}

func (t *test) postSends(n *node) int {
	if !n.connected || t.cfg.Count == 0 {
		return 0
	}
	wr := &uverbs.SendWR{Opcode: uverbs.OpSend, SGE: []uverbs.SGE{{Addr: n.buf.Addr(0), Length: uint32(t.cfg.Size), LKey: n.mr.LKey()}}}
	for range t.cfg.Count {
		if err := n.res.QP.PostSend(wr); err != nil {
			t.printf("failed to post sends: %d\n", cmnode.Errno(err))
			return int(cmnode.Errno(err))
		}
	}
	return 0
}

// pollCQs takes count completions (of any status) from the send or
// receive CQ of every connected node.
func (t *test) pollCQs(recv bool) int {
	for _, n := range t.nodes {
		if !n.connected {
			continue
		}
		cq := n.res.SendCQ
		if recv {
			cq = n.res.RecvCQ
		}
		for range t.cfg.Count {
			if _, err := n.res.Wait(context.Background(), cq); err != nil {
				t.printf("cmatose: failed polling CQ: %d\n", -int(cmnode.Errno(err)))
				return -int(cmnode.Errno(err))
			}
		}
	}
	return 0
}

// setOptions sets -t's type of service (before route resolution) and
// -a's ACK timeout, as the C program: a failure is reported, not fatal.
func (t *test) setOptions(id *rdma.ID, tos bool) {
	if tos && t.cfg.setTOS {
		if err := id.SetOption(rdma.OptionTOS, int(t.cfg.tos)); err != nil {
			t.perror("cmatose: set TOS option failed", err)
		}
	}
	if t.cfg.setTimeout {
		if err := id.SetOption(rdma.OptionAckTimeout, int(t.cfg.ackTimeout)); err != nil {
			t.perror("cmatose: set ack timeout option failed", err)
		}
	}
}

func (t *test) addrHandler(n *node) int {
	t.setOptions(n.id, true)
	if err := n.id.ResolveRoute(context.Background(), resolveTimeout); err != nil {
		t.perror("cmatose: resolve route failed", err)
		t.connectsLeft--
		return -1
	}
	return 0
}

func (t *test) routeHandler(n *node) int {
	ret := t.initNode(n)
	if ret == 0 {
		ret = t.postRecvs(n)
	}
	if ret == 0 {
		param := &rdma.ConnParam{ResponderResources: 1, InitiatorDepth: 1, RetryCount: 5}
		if err := n.id.Connect(context.Background(), param); err != nil {
			t.perror("cmatose: failure connecting", err)
			ret = -1
		}
	}
	if ret != 0 {
		t.connectsLeft--
	}
	return ret
}

func (t *test) connectHandler(id *rdma.ID) int {
	ret := 0
	if t.connIndex == len(t.nodes) {
		ret = -int(unix.ENOMEM)
	} else {
		n := t.nodes[t.connIndex]
		t.connIndex++
		n.id = id
		t.byID[id] = n
		ret = t.initNode(n)
		if ret == 0 {
			t.setOptions(id, false)
			ret = t.postRecvs(n)
		}
		if ret == 0 {
			if err := id.Accept(context.Background(), nil); err != nil {
				t.perror("cmatose: failure accepting", err)
				ret = -1
			}
		}
		if ret == 0 {
			return 0
		}
		if n.res != nil {
			// The C program leaks the node's resources here; ours
			// go with the id below.
			n.res.Close()
			n.res = nil
		}
		n.id = nil
		t.connectsLeft--
	}
	t.printf("cmatose: failing connection request\n")
	id.Reject(nil)
	id.Close()
	return ret
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
		if n != nil {
			n.connected = true
		}
		t.connectsLeft--
		t.disconnectsLeft++
	case rdma.EventAddrError, rdma.EventRouteError, rdma.EventConnectError, rdma.EventUnreachable, rdma.EventRejected:
		t.connectsLeft--
		return cmnode.EventError(t.stdout, "cmatose", ev)
	case rdma.EventDisconnected:
		ev.ID.Disconnect()
		t.disconnectsLeft--
	}
	return 0
}

// loop is connect_events and disconnect_events: events until *left is
// 0 or one fails.
func (t *test) loop(left *int, phase string) int {
	ret := 0
	for *left > 0 && ret == 0 {
		ev, err := t.ch.GetEvent(context.Background())
		if err != nil {
			t.perror("cmatose: failure in rdma_get_cm_event in "+phase+" events", err)
			return int(cmnode.Errno(err))
		}
		ret = t.handle(ev)
		ev.Ack()
	}
	return ret
}

// migrateChannel moves the listener (on a server) and every node's id
// to a new event channel, which replaces the old one (rdma_migrate_id).
func (t *test) migrateChannel(listen *rdma.ID) int {
	t.printf("migrating to new event channel\n")
	ch, err := rdma.CreateEventChannel()
	if err != nil {
		t.perror("cmatose: failed to create event channel", err)
		return -1
	}
	ids := []*rdma.ID{listen}
	for _, n := range t.nodes {
		ids = append(ids, n.id)
	}
	for _, id := range ids {
		if id == nil {
			continue
		}
		if err := id.Migrate(ch); err != nil {
			t.perror("cmatose: failure migrating to channel", err)
			// The ids moved so far stay on the new channel, which the
			// end closes with the old one.
			t.extra = append(t.extra, ch)
			return -1
		}
	}
	t.ch.Close()
	t.ch = ch
	return 0
}

func (t *test) runServer() int {
	t.printf("cmatose: starting server\n")
	listen, err := t.ch.CreateID(t.cfg.ps, ib.QPTypeRC)
	if err != nil {
		t.perror("cmatose: listen request failed", err)
		return -1
	}
	defer listen.Close()
	if le := t.getAddrs(true); le != nil {
		t.printf("cmatose: getrdmaaddr error: %s\n", le.Text)
		return le.Code
	}
	if err := listen.Bind(t.src); err != nil {
		t.perror("cmatose: bind address failed", err)
		return -1
	}
	if err := listen.Listen(0); err != nil {
		t.perror("cmatose: failure trying to listen", err)
		return -1
	}
	if ret := t.loop(&t.connectsLeft, "connect"); ret != 0 {
		return ret
	}
	if t.cfg.Count != 0 {
		t.printf("initiating data transfers\n")
		for _, n := range t.nodes {
			if ret := t.postSends(n); ret != 0 {
				return ret
			}
		}
		t.printf("completing sends\n")
		if ret := t.pollCQs(false); ret != 0 {
			return ret
		}
		t.printf("receiving data transfers\n")
		if ret := t.pollCQs(true); ret != 0 {
			return ret
		}
		t.printf("data transfers complete\n")
	}
	if t.cfg.migrate {
		if ret := t.migrateChannel(listen); ret != 0 {
			return ret
		}
	}
	t.printf("cmatose: disconnecting\n")
	for _, n := range t.nodes {
		if !n.connected {
			continue
		}
		n.connected = false
		n.id.Disconnect()
	}
	ret := t.loop(&t.disconnectsLeft, "disconnect")
	t.printf("disconnected\n")
	return ret
}

func (t *test) runClient() int {
	t.printf("cmatose: starting client\n")
	if le := t.getAddrs(false); le != nil {
		t.printf("cmatose: getaddrinfo error: %s\n", le.Text)
		return le.Code
	}
	t.printf("cmatose: connecting\n")
	for _, n := range t.nodes {
		if err := n.id.ResolveAddr(context.Background(), t.src, t.dst, resolveTimeout); err != nil {
			t.perror("cmatose: failure getting addr", err)
			t.connectsLeft--
			return -1
		}
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
	if t.cfg.Count == 0 {
		return 0
	}
	t.printf("receiving data transfers\n")
	if ret := t.pollCQs(true); ret != 0 {
		return ret
	}
	t.printf("sending replies\n")
	for _, n := range t.nodes {
		if ret := t.postSends(n); ret != 0 {
			return ret
		}
	}
	t.printf("data transfers complete\n")
	return 0
}
