package cmatest

import (
	"context"
	"fmt"
	"time"

	"github.com/rdmastack/rdmastack/cmd/internal/cmnode"
	"github.com/rdmastack/rdmastack/ib"
	"github.com/rdmastack/rdmastack/rdma"
)

// ResolveTimeout is the C programs' timeout for address and route
// resolution, 2000 ms.
const ResolveTimeout = 2000 * time.Millisecond

// Run is what main does around the test: the event channel (t.Ch),
// alloc's nodes (t.Nodes; status 1 when it fails), run, then "test
// complete", every node destroyed, the completion and event channels
// closed and "return status <n>". It returns run's status.
func (t *Test) Run(alloc func() bool, run func() int) int {
	ch, msg, _ := cmnode.CreateChannel()
	if ch == nil {
		fmt.Fprintln(t.Stderr, msg)
		return 1
	}
	t.Ch = ch
	if !alloc() {
		ch.Close()
		return 1
	}
	ret := run()
	t.Printf("test complete\n")
	for _, n := range t.Nodes {
		n.Destroy()
	}
	t.Comp.Close()
	t.Ch.Close()
	t.Printf("return status %d\n", ret)
	return ret
}

// AllocNodes makes count nodes (alloc_nodes), and on a client
// (client) their ids on t.Ch, of port space ps and QP type typ. When an
// id fails, those made are closed, and it returns false.
func (t *Test) AllocNodes(count int, client bool, ps rdma.PortSpace, typ ib.QPType) bool {
	t.Nodes = make([]*Node, max(count, 0))
	t.ByID = make(map[*rdma.ID]*Node, len(t.Nodes))
	for i := range t.Nodes {
		n := &Node{}
		t.Nodes[i] = n
		if !client {
			continue
		}
		id, err := t.Ch.CreateID(ps, typ)
		if err != nil {
			for _, m := range t.Nodes[:i] {
				m.ID.Close()
			}
			return false
		}
		n.ID = id
		t.ByID[id] = n
	}
	return true
}

// Listen is a server's start: an id on t.Ch listening on src (-b) as
// get_rdma_addr resolves it with hints. A failure is printed as the C
// programs print it, and its status returned.
func (t *Test) Listen(ps rdma.PortSpace, typ ib.QPType, hints cmnode.AddrHints, src string) (*rdma.ID, int) {
	listen, err := t.Ch.CreateID(ps, typ)
	if err != nil {
		t.Perror(t.Prog+": listen request failed", err)
		return nil, -1
	}
	bound, _, le := hints.GetRDMAAddr(src, "", true)
	if le != nil {
		t.Printf("%s: getrdmaaddr error: %s\n", t.Prog, le.Text)
		listen.Close()
		return nil, le.Code
	}
	if err := listen.Bind(bound); err != nil {
		t.Perror(t.Prog+": bind address failed", err)
		listen.Close()
		return nil, -1
	}
	if err := listen.Listen(0); err != nil {
		t.Perror(t.Prog+": failure trying to listen", err)
		listen.Close()
		return nil, -1
	}
	return listen, 0
}

// Connect is a client's start: src (-b) and dst (-s) as get_rdma_addr
// resolves them with hints, "<prog>: connecting", then every node's id
// resolving its address within ResolveTimeout. A failure is printed as the C
// programs print it, and its status returned; a failed resolution
// counts one connection fewer in *left.
func (t *Test) Connect(hints cmnode.AddrHints, src, dst string, left *int) int {
	s, d, le := hints.GetRDMAAddr(src, dst, false)
	if le != nil {
		t.Printf("%s: getaddrinfo error: %s\n", t.Prog, le.Text)
		return le.Code
	}
	t.Printf("%s: connecting\n", t.Prog)
	for _, n := range t.Nodes {
		if err := n.ID.ResolveAddr(context.Background(), s, d, ResolveTimeout); err != nil {
			t.Perror(t.Prog+": failure getting addr", err)
			*left--
			return -1
		}
	}
	return 0
}

// ResolveRoute is addr_handler's resolution of n's route within
// ResolveTimeout; a failure is printed, counts one connection fewer in
// *left, and returns -1.
func (t *Test) ResolveRoute(n *Node, left *int) int {
	if err := n.ID.ResolveRoute(context.Background(), ResolveTimeout); err != nil {
		t.Perror(t.Prog+": resolve route failed", err)
		*left--
		return -1
	}
	return 0
}

// ConnectNode is route_handler: prepare readies n, and its id connects
// with param. A failure is printed, counts one connection fewer in
// *left, and returns the handler's status.
func (t *Test) ConnectNode(n *Node, prepare func(*Node) int, param *rdma.ConnParam, left *int) int {
	ret := prepare(n)
	if ret == 0 {
		if err := n.ID.Connect(context.Background(), param); err != nil {
			t.Perror(t.Prog+": failure connecting", err)
			ret = -1
		}
	}
	if ret != 0 {
		*left--
	}
	return ret
}

// Accept is connect_handler: the connection request's id takes the
// next node (-ENOMEM when none is left), prepare readies it, and the id
// is accepted with param's answer. When that fails, the node's
// resources go, one connection fewer is counted in *left, and the
// request is refused: "<prog>: failing connection request", a reject and
// the id closed (the C programs leak the node's resources there). It
// returns the node (nil on a failure) and the handler's status.
func (t *Test) Accept(id *rdma.ID, prepare func(*Node) int, param func(*Node) *rdma.ConnParam, left *int) (*Node, int) {
	ret := -12 // -ENOMEM
	if t.next < len(t.Nodes) {
		n := t.Nodes[t.next]
		t.next++
		n.ID = id
		t.ByID[id] = n
		ret = prepare(n)
		if ret == 0 {
			if err := id.Accept(context.Background(), param(n)); err != nil {
				t.Perror(t.Prog+": failure accepting", err)
				ret = -1
			}
		}
		if ret == 0 {
			return n, 0
		}
		if n.Res != nil {
			n.Res.Close()
			n.Res = nil
		}
		n.ID = nil
		delete(t.ByID, id)
		*left--
	}
	t.Printf("%s: failing connection request\n", t.Prog)
	id.Reject(nil)
	id.Close()
	return nil, ret
}

// A Handler is a program's case of cma_handler, given the event and the
// node whose id it is for (nil when none is: a connection request).
type Handler func(*Node, *rdma.Event) int

// Handlers are a program's cases of cma_handler, by event type; an
// event without one is ignored.
type Handlers map[rdma.EventType]Handler

// Handle is cma_handler: ev to its handler with its node (t.ByID), and
// an error event (address, route, connect or multicast error,
// unreachable, rejected) counted as one connection fewer in *left and
// printed as the C programs print it. It returns the handler's status.
func (t *Test) Handle(ev *rdma.Event, h Handlers, left *int) int {
	switch ev.Type {
	case rdma.EventAddrError, rdma.EventRouteError, rdma.EventConnectError, rdma.EventUnreachable,
		rdma.EventRejected, rdma.EventMulticastError:
		*left--
		return cmnode.EventError(t.Stdout, t.Prog, ev)
	}
	if handle := h[ev.Type]; handle != nil {
		return handle(t.ByID[ev.ID], ev)
	}
	return 0
}

// ConnectEvents is connect_events in udaddy.c and mckey.c: t.Ch's
// events, each handled then acked, until *left (which the handlers
// count down) is 0 or a handler fails; a failed read ends it with
// -errno.
func (t *Test) ConnectEvents(left *int, handle func(*rdma.Event) int) int {
	ret := 0
	for *left > 0 && ret == 0 {
		ev, err := t.Ch.GetEvent(context.Background())
		if err != nil {
			return int(-cmnode.Errno(err))
		}
		ret = handle(ev)
		ev.Ack()
	}
	return ret
}
