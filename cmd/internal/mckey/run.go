// Package mckey is the engine of cmd/mckey, a drop-in for rdma-core's
// mckey (librdmacm/examples/mckey.c, v44): -c UD ids join the multicast
// group -m over rdma_cm; after 3 s a sender (-s) sends -C SEND_WITH_IMM
// datagrams of -S bytes to the group (QPN 0xFFFFFF) and a receiver waits
// for as many; then every id leaves. Same options, output lines and exit
// statuses, so either side can be rdma-core's. The node (QP, CQ,
// buffers, sends and receives) and the run are udaddy's:
// cmd/internal/cmatest.
package mckey

import (
	"context"
	"io"
	"net/netip"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/rdmastack/rdmastack/cmd/internal/cmatest"
	"github.com/rdmastack/rdmastack/cmd/internal/cmnode"
	"github.com/rdmastack/rdmastack/ib"
	"github.com/rdmastack/rdmastack/rdma"
)

// settle is the pause after the joins, which mckey.c gives the subnet
// manager to program the switches.
var settle = 3 * time.Second

// Main runs mckey with args (the words after the program name); prog is
// the name it reports itself by (C's argv[0]).
func Main(prog string, stdout, stderr io.Writer, args []string) error {
	c, err := parse(prog, stdout, stderr, args)
	if err != nil {
		return err
	}
	t := &test{cfg: c, byID: make(map[*rdma.ID]*node),
		ud: &cmatest.Test{Prog: "mckey", Stdout: stdout, Stderr: stderr, Size: c.Size, Count: c.Count, Type: ib.QPTypeUD}}
	t.handlers = cmatest.Handlers{
		rdma.EventAddrResolved:  func(_ *cmatest.Node, ev *rdma.Event) int { return t.addrHandler(t.byID[ev.ID]) },
		rdma.EventMulticastJoin: func(_ *cmatest.Node, ev *rdma.Event) int { return t.joinHandler(t.byID[ev.ID], ev) },
	}
	return cmnode.Return(t.main())
}

// node is a UD node and the group it joined.
type node struct {
	cmatest.Node
	mc *rdma.Multicast
}

// test is struct cmatest.
type test struct {
	cfg          *config
	ud           *cmatest.Test
	handlers     cmatest.Handlers // by its own nodes (byID), which embed cmatest's
	nodes        []*node
	byID         map[*rdma.ID]*node
	connectsLeft int
	src, dst     netip.Addr
}

func (t *test) main() int {
	t.connectsLeft = t.cfg.Connections
	return t.ud.Run(t.allocNodes, t.run)
}

// allocNodes makes the nodes and their ids on the run's channel.
func (t *test) allocNodes() bool {
	t.nodes = make([]*node, max(t.cfg.Connections, 0))
	t.ud.Nodes = make([]*cmatest.Node, len(t.nodes))
	for i := range t.nodes {
		id, err := t.ud.Ch.CreateID(t.cfg.ps, cmnode.QPType(t.cfg.ps))
		if err != nil {
			for _, m := range t.nodes[:i] {
				m.ID.Close()
			}
			t.ud.Nodes = nil
			return false
		}
		t.nodes[i] = &node{Node: cmatest.Node{ID: id}}
		t.byID[id] = t.nodes[i]
		t.ud.Nodes[i] = &t.nodes[i].Node
	}
	return true
}

// getAddr is mckey.c's get_addr: getaddrinfo(host, NULL, NULL).
func (t *test) getAddr(host string) (netip.Addr, int) {
	a, err := cmnode.Lookup(host)
	if err != nil {
		le := err.(*cmnode.LookupError)
		t.ud.Printf("getaddrinfo failed (%s) - invalid hostname or IP address\n", le.Text)
		return netip.Addr{}, le.Code
	}
	return a, 0
}

func (t *test) addrHandler(n *node) int {
	ret := t.ud.VerifyParams(&n.Node)
	if ret == 0 {
		ret = t.initNode(n)
	}
	if ret == 0 && !t.cfg.sender {
		ret = t.ud.PostRecvs(&n.Node)
	}
	if ret == 0 {
		mc, err := t.join(n)
		if err != nil {
			t.ud.Perror("mckey: failure joining", err)
			ret = -1
		}
		n.mc = mc
	}
	if ret != 0 {
		t.connectsLeft--
	}
	return ret
}

// initNode is init_node. -l asks for a QP that does not receive its own
// multicast (IBV_QP_CREATE_BLOCK_SELF_MCAST_LB, through
// ibv_create_qp_ex); package uverbs creates QPs without create flags,
// and rxe refuses them, so the QP fails as rdma-core's does there.
func (t *test) initNode(n *node) int {
	if t.cfg.noLoopback {
		t.ud.Perror("mckey: unable to create QP", unix.EOPNOTSUPP)
		return -1
	}
	return t.ud.Init(&n.Node)
}

// join is rdma_join_multicast_ex: the group, as a send-only full member
// with -o. An unmapped (-M, AF_IB) group is not implemented.
func (t *test) join(n *node) (*rdma.Multicast, error) {
	if t.cfg.unmapped {
		return nil, unix.EAFNOSUPPORT
	}
	return n.ID.JoinMulticast(context.Background(), t.dst, t.cfg.sendOnly)
}

func (t *test) joinHandler(n *node, ev *rdma.Event) int {
	ah := &ev.Peer.AH
	t.ud.Printf("mckey: joined dgid: %v mlid 0x%x sl %d\n", ah.DGID, ah.DLID, ah.SL)
	return t.ud.Resolved(&n.Node, &ev.Peer, &t.connectsLeft)
}

// handle is cma_handler.
func (t *test) handle(ev *rdma.Event) int {
	return t.ud.Handle(ev, t.handlers, &t.connectsLeft)
}

func (t *test) connectEvents() int { return t.ud.ConnectEvents(&t.connectsLeft, t.handle) }

// watch is cma_thread: it reports the events that come after the joins
// until ctx ends (the C thread lives until the process exits).
func (t *test) watch(ctx context.Context) {
	for {
		ev, err := t.ud.Ch.GetEvent(ctx)
		if err != nil {
			if ctx.Err() == nil {
				t.ud.Perror("rdma_get_cm_event", err)
			}
			return
		}
		if ev.Type == rdma.EventMulticastError || ev.Type == rdma.EventAddrChange {
			t.ud.Printf("mckey: event: %s, status: %d\n", cmnode.EventName(ev.Type), cmnode.Status(ev.Status))
		}
		ev.Ack()
	}
}

func (t *test) run() int {
	role := "server"
	if t.cfg.sender {
		role = "client"
	}
	t.ud.Printf("mckey: starting %s\n", role)
	if t.cfg.src != "" {
		var ret int
		if t.src, ret = t.getAddr(t.cfg.src); ret != 0 {
			return ret
		}
	}
	if t.cfg.unmapped {
		a, err := netip.ParseAddr(t.cfg.dst)
		if err == nil {
			t.dst = a
		}
	} else {
		var ret int
		if t.dst, ret = t.getAddr(t.cfg.dst); ret != 0 {
			return ret
		}
	}
	t.ud.Printf("mckey: joining\n")
	for _, n := range t.nodes {
		var src netip.AddrPort
		if t.cfg.src != "" {
			src = netip.AddrPortFrom(t.src, 0)
			if err := n.ID.Bind(src); err != nil {
				t.ud.Perror("mckey: addr bind failure", err)
				t.connectsLeft--
				return -1
			}
		}
		// With -M the node is set up and joins at once (no resolution);
		// its failure is reported twice, as the C program does.
		var ret int
		var err error
		if t.cfg.unmapped {
			ret, err = t.addrHandler(n), unix.EAFNOSUPPORT
		} else if err = n.ID.ResolveAddr(context.Background(), src, netip.AddrPortFrom(t.dst, 0), cmatest.ResolveTimeout); err != nil {
			ret = -1
		}
		if ret != 0 {
			t.ud.Perror("mckey: resolve addr failure", err)
			t.connectsLeft--
			return ret
		}
	}
	ret := t.connectEvents()
	if ret == 0 {
		ret = t.transfer()
	}
	// The last leave's status is the run's, as in the C program.
	for _, n := range t.nodes {
		ret = t.leave(n)
	}
	return ret
}

// transfer starts the event watcher, pauses, then sends or receives.
func (t *test) transfer() int {
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t.watch(ctx)
	}()
	defer func() {
		cancel()
		wg.Wait()
	}()
	time.Sleep(settle)
	if t.ud.Count == 0 {
		return 0
	}
	if t.cfg.sender {
		t.ud.Printf("initiating data transfers\n")
		for _, n := range t.nodes {
			if ret := t.ud.PostSends(&n.Node, false); ret != 0 {
				return ret
			}
		}
	} else {
		t.ud.Printf("receiving data transfers\n")
		for _, n := range t.nodes {
			if !n.Connected {
				continue
			}
			if ret := t.ud.Poll(context.Background(), &n.Node, nil); ret != 0 {
				return ret
			}
		}
	}
	t.ud.Printf("data transfers complete\n")
	return 0
}

// leave is rdma_leave_multicast, which fails with EADDRNOTAVAIL for a
// group the id has not joined.
func (t *test) leave(n *node) int {
	err := error(unix.EADDRNOTAVAIL)
	if n.mc != nil {
		err = n.mc.Leave()
	}
	if err != nil {
		t.ud.Perror("mckey: failure leaving", err)
		return -1
	}
	return 0
}
