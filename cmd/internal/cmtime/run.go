// Package cmtime is the engine of cmd/cmtime, a drop-in for rdma-core's
// cmtime (librdmacm/examples/cmtime.c, v44): a client that times each
// step of setting up and tearing down -c RC connections over rdma_cm,
// every step issued for all connections and then waited for as a batch,
// and a server that accepts and disconnects them until it is killed.
// Same options, output lines, table and exit statuses, so either side
// can be rdma-core's.
//
// As in cmtime.c, one event channel carries every id's events, read by
// one goroutine (the C program's event thread) that ends the steps the
// events answer; the server hands connection requests and
// disconnections to two workers (its req and disc threads). Times come
// from Go's monotonic clock, so the table's µs have fractions where
// gettimeofday's have none.
//
// Where ours differs: a server that fails before serving (lookup, bind,
// listen) prints cmtime.c's lines and "destroying id" and exits with
// cmtime.c's return value, where cmtime.c then crashes (SIGSEGV) on the
// nodes a server never allocates; a client whose event loop fails stops
// waiting rather than spinning forever; a step's wait ends once at least
// as many nodes completed as started (C waits for equality); -t 0 and
// a negative -t become package rdma's least and most timeouts, 1 ms and
// 2^31 ms (C hands the kernel 0, which still resolves local addresses,
// and a u32 of more than 24 days).
//
// A client's -b binds every id to that address first (rdma_bind_addr),
// which pins it to the address's netdev. Where the destination is a
// local address of another netdev (the VM's veth pair: -b 10.77.0.2
// -s 10.77.0.1), the kernel then routes it out of the bound netdev as a
// neighbour, and its ARP request reaches the other end from a local
// source address, which the kernel drops as martian (accept_local=0):
// the neighbour stays INCOMPLETE and every id ends in
// RDMA_CM_EVENT_ADDR_ERROR -110 (ETIMEDOUT) after each -t, in rdma-core's
// cmtime and in ours alike; with -b on the destination's own netdev
// both work.
package cmtime

import (
	"context"
	"fmt"
	"io"
	"net/netip"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/rdmastack/rdmastack/cmd/internal/cmnode"
	"github.com/rdmastack/rdmastack/ib"
	"github.com/rdmastack/rdmastack/rdma"
	"github.com/rdmastack/rdmastack/uverbs"
)

// Main runs cmtime with args (the words after the program name); prog
// is the name it reports itself by (C's argv[0]). A server runs until
// it fails.
func Main(prog string, stdout, stderr io.Writer, args []string) error {
	return Run(context.Background(), prog, stdout, stderr, args)
}

// Run is Main; a server also ends, with ctx's error and having freed
// everything, when ctx is done, and a client stops waiting then.
func Run(ctx context.Context, prog string, stdout, stderr io.Writer, args []string) error {
	c, err := parse(prog, stdout, stderr, args)
	if err != nil {
		return err
	}
	t := &test{cfg: c, stdout: stdout, stderr: stderr, wake: make(chan struct{}, 1)}
	ret, err := t.main(ctx)
	if err != nil {
		return err
	}
	return cmnode.Return(ret)
}

// step is one timed step (enum step).
type step int

const (
	stepCreateID step = iota
	stepBind
	stepResolveAddr
	stepResolveRoute
	stepCreateQP
	stepConnect
	stepDisconnect
	stepDestroy
	nSteps
)

var stepNames = [nSteps]string{"create id", "bind addr", "resolve addr", "resolve route", "create qp", "connect", "disconnect", "destroy"}

// span is when a step began and ended; a zero time is one not taken.
type span [2]time.Time

func (s span) taken() bool { return !s[0].IsZero() && !s[1].IsZero() }

// node is one connection (struct node).
type node struct {
	id      *rdma.ID
	res     *qpRes
	times   [nSteps]span
	err     bool // a step failed: the later ones skip the node
	retries int  // resolution retries left
}

// test is the program's state. mu guards what the event goroutine and
// the steps share: the nodes' times, errors and retries, and the counts
// of completed steps.
type test struct {
	cfg            *config
	stdout, stderr io.Writer
	outMu          sync.Mutex

	ch       *rdma.EventChannel
	nodes    []*node
	byID     map[*rdma.ID]*node
	src, dst netip.AddrPort
	pds      map[*rdma.Device]*uverbs.PD
	times    [nSteps]span

	mu        sync.Mutex
	completed [nSteps]int
	evDead    bool          // the event goroutine ended
	wake      chan struct{} // a step completed (buffer 1)
}

func (t *test) printf(format string, a ...any) {
	t.outMu.Lock()
	fmt.Fprintf(t.stdout, format, a...)
	t.outMu.Unlock()
}

func (t *test) perror(what string, err error) {
	t.outMu.Lock()
	fmt.Fprintln(t.stderr, cmnode.Perror(what, err))
	t.outMu.Unlock()
}

// ret is what a failed librdmacm call returns (-1).
func ret(err error) int {
	if err != nil {
		return -1
	}
	return 0
}

func (t *test) main(ctx context.Context) (int, error) {
	ch, msg, _ := cmnode.CreateChannel()
	if ch == nil {
		fmt.Fprintln(t.stderr, msg)
		return 1, nil
	}
	t.ch = ch
	t.pds = make(map[*rdma.Device]*uverbs.PD)
	if t.cfg.dst == "" {
		return t.runServer(ctx)
	}
	t.allocNodes()
	evCtx, stop := context.WithCancel(ctx)
	evDone := make(chan struct{})
	r := t.runClient(ctx, evCtx, evDone)
	t.cleanupNodes()
	stop()
	<-evDone
	for _, pd := range t.pds {
		pd.Close()
	}
	t.ch.Close()
	t.showPerf()
	return r, nil
}

// allocNodes creates the client's ids, timed. A negative count is C's
// failed calloc: no node, and nothing printed.
func (t *test) allocNodes() {
	t.byID = make(map[*rdma.ID]*node)
	if t.cfg.connections < 0 {
		return
	}
	t.nodes = make([]*node, t.cfg.connections)
	t.printf("creating id\n")
	t.times[stepCreateID][0] = time.Now()
	for i := range t.nodes {
		n := &node{}
		n.times[stepCreateID][0] = time.Now()
		id, err := t.ch.CreateID(rdma.PortSpaceTCP, ib.QPTypeRC)
		if err != nil {
			// cmtime.c destroys the ids made so far, leaves the nodes
			// unallocated and carries on without them.
			for _, m := range t.nodes[:i] {
				m.id.Close()
			}
			t.nodes, t.byID = nil, make(map[*rdma.ID]*node)
			return
		}
		n.times[stepCreateID][1] = time.Now()
		n.id = id
		t.nodes[i] = n
		t.byID[id] = n
	}
	t.times[stepCreateID][1] = time.Now()
}

// cleanupNodes destroys the ids (and whatever is left of their QPs),
// timed.
func (t *test) cleanupNodes() {
	t.printf("destroying id\n")
	t.times[stepDestroy][0] = time.Now()
	for _, n := range t.nodes {
		t.mu.Lock()
		n.times[stepDestroy][0] = time.Now()
		t.mu.Unlock()
		if n.id != nil {
			n.id.Close()
			if n.res != nil {
				n.res.close()
			}
		}
		t.mu.Lock()
		n.times[stepDestroy][1] = time.Now()
		t.mu.Unlock()
	}
	t.times[stepDestroy][1] = time.Now()
}

// qpRes is what rdma_create_qp makes when given no PD and no CQs: a
// receive and a send CQ of one entry, each with a completion channel of
// its own, and the QP (on the device's shared PD).
type qpRes struct {
	chans [2]*uverbs.CompChannel
	cqs   [2]*uverbs.CQ
	qp    *uverbs.QP
}

// pd is the device's PD, made on first use: librdmacm's per-device PD
// that rdma_create_qp takes when given none.
func (t *test) pd(dev *rdma.Device) (*uverbs.PD, error) {
	if pd := t.pds[dev]; pd != nil {
		return pd, nil
	}
	vctx, err := dev.Context()
	if err != nil {
		return nil, err
	}
	pd, err := vctx.AllocPD()
	if err != nil {
		return nil, err
	}
	t.pds[dev] = pd
	return pd, nil
}

// createQP is rdma_create_qp(id, NULL, attr) with cmtime's attributes:
// RC, one WR and one SGE each way.
func (t *test) createQP(id *rdma.ID) (*qpRes, error) {
	dev := id.Device()
	if dev == nil {
		return nil, unix.EINVAL
	}
	pd, err := t.pd(dev)
	if err != nil {
		return nil, err
	}
	vctx, err := dev.Context()
	if err != nil {
		return nil, err
	}
	r := &qpRes{}
	for i := range r.cqs {
		if r.chans[i], err = vctx.CreateCompChannel(); err != nil {
			r.close()
			return nil, err
		}
		if r.cqs[i], err = vctx.CreateCQ(uverbs.CQAttr{CQE: 1, CompChannel: r.chans[i]}); err != nil {
			r.close()
			return nil, err
		}
	}
	r.qp, err = id.CreateQP(pd, uverbs.QPInit{Type: ib.QPTypeRC, SendCQ: r.cqs[1], RecvCQ: r.cqs[0],
		Cap: uverbs.QPCap{MaxSendWR: 1, MaxRecvWR: 1, MaxSendSGE: 1, MaxRecvSGE: 1}})
	if err != nil {
		r.close()
		return nil, err
	}
	return r, nil
}

// close is rdma_destroy_qp: the QP, then its CQs and channels. Closing
// twice is harmless.
func (r *qpRes) close() {
	if r.qp != nil {
		r.qp.Close()
	}
	for i := range r.cqs {
		if r.cqs[i] != nil {
			r.cqs[i].Close()
		}
		if r.chans[i] != nil {
			r.chans[i].Close()
		}
	}
}

// complete ends step s of n (end_perf) and counts it; called with t.mu
// held.
func (t *test) complete(n *node, s step) {
	n.times[s][1] = time.Now()
	t.completed[s]++
	select {
	case t.wake <- struct{}{}:
	default:
	}
}

// events is the client's event thread (process_events and cma_handler).
func (t *test) events(ctx context.Context, done chan<- struct{}) {
	defer close(done)
	for {
		ev, err := t.ch.GetEvent(ctx)
		if err != nil {
			if ctx.Err() == nil {
				t.perror("failure in rdma_get_cm_event in process_server_events", err)
			}
			t.mu.Lock()
			t.evDead = true
			t.mu.Unlock()
			select {
			case t.wake <- struct{}{}:
			default:
			}
			return
		}
		t.handle(ev)
		ev.Ack()
	}
}

// handle is cma_handler on the client: it ends the step the event
// answers, retries a failed resolution -r times, and marks a node that
// failed.
func (t *test) handle(ev *rdma.Event) {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := t.byID[ev.ID]
	if n == nil {
		return
	}
	timeout := t.cfg.resolveTimeout()
	switch ev.Type {
	case rdma.EventAddrResolved:
		t.complete(n, stepResolveAddr)
	case rdma.EventRouteResolved:
		t.complete(n, stepResolveRoute)
	case rdma.EventEstablished:
		t.complete(n, stepConnect)
	case rdma.EventAddrError:
		left := n.retries
		n.retries--
		if left != 0 {
			if n.id.ResolveAddr(context.Background(), t.src, t.dst, timeout) == nil {
				return
			}
		}
		t.printf("RDMA_CM_EVENT_ADDR_ERROR, error: %d\n", cmnode.Status(ev.Status))
		t.complete(n, stepResolveAddr)
		n.err = true
	case rdma.EventRouteError:
		left := n.retries
		n.retries--
		if left != 0 {
			if n.id.ResolveRoute(context.Background(), timeout) == nil {
				return
			}
		}
		t.printf("RDMA_CM_EVENT_ROUTE_ERROR, error: %d\n", cmnode.Status(ev.Status))
		t.complete(n, stepResolveRoute)
		n.err = true
	case rdma.EventConnectError, rdma.EventUnreachable, rdma.EventRejected:
		t.printf("event: %s, error: %d\n", cmnode.EventName(ev.Type), cmnode.Status(ev.Status))
		t.complete(n, stepConnect)
		n.err = true
	case rdma.EventDisconnected:
		t.complete(n, stepDisconnect)
	}
}

// begin starts step s for every node without an error: start times
// each node (start_perf) and issues its call; a failure is reported
// (perror) and marks the node. It returns how many started, and sets
// *r to each call's return (C's ret).
func (t *test) begin(s step, what string, r *int, call func(n *node) error) (started int) {
	for _, n := range t.nodes {
		t.mu.Lock()
		skip := n.err
		if !skip {
			n.retries = t.cfg.retries
			n.times[s][0] = time.Now()
		}
		t.mu.Unlock()
		if skip {
			continue
		}
		err := call(n)
		if *r = ret(err); err != nil {
			t.perror(what, err)
			t.mu.Lock()
			n.err = true
			t.mu.Unlock()
			continue
		}
		started++
	}
	return started
}

// wait waits until started nodes completed step s (the events say so),
// or the event goroutine ended, or ctx is done.
func (t *test) wait(ctx context.Context, s step, started int) {
	for {
		t.mu.Lock()
		done := t.completed[s] >= started || t.evDead
		t.mu.Unlock()
		if done {
			return
		}
		select {
		case <-t.wake:
		case <-ctx.Done():
			return
		}
	}
}

// end takes the node's end time of a synchronous step (end_perf).
func (t *test) end(n *node, s step) {
	t.mu.Lock()
	n.times[s][1] = time.Now()
	t.mu.Unlock()
}

func (t *test) runClient(ctx, evCtx context.Context, evDone chan struct{}) int {
	var le *cmnode.LookupError
	t.src, t.dst, le = t.cfg.hints.GetRDMAAddr(t.cfg.src, t.cfg.dst, false)
	if le != nil {
		t.printf("getaddrinfo error: %s\n", le.Text)
		close(evDone)
		return le.Code
	}
	go t.events(evCtx, evDone)
	timeout := t.cfg.resolveTimeout()
	r := 0

	if t.cfg.src != "" {
		t.printf("binding source address\n")
		t.times[stepBind][0] = time.Now()
		for _, n := range t.nodes {
			t.mu.Lock()
			n.times[stepBind][0] = time.Now()
			t.mu.Unlock()
			err := n.id.Bind(t.src)
			if r = ret(err); err != nil {
				t.perror("failure bind addr", err)
				t.mu.Lock()
				n.err = true
				t.mu.Unlock()
				continue
			}
			t.end(n, stepBind)
		}
		t.times[stepBind][1] = time.Now()
	}

	// The asynchronous steps: issued for all, then waited for.
	async := func(s step, line, what string, call func(n *node) error) {
		t.printf("%s", line)
		t.times[s][0] = time.Now()
		started := t.begin(s, what, &r, call)
		t.wait(ctx, s, started)
		t.times[s][1] = time.Now()
	}
	async(stepResolveAddr, "resolving address\n", "failure getting addr", func(n *node) error {
		return n.id.ResolveAddr(ctx, t.src, t.dst, timeout)
	})
	async(stepResolveRoute, "resolving route\n", "failure resolving route", func(n *node) error {
		return n.id.ResolveRoute(ctx, timeout)
	})

	t.printf("creating qp\n")
	t.times[stepCreateQP][0] = time.Now()
	for _, n := range t.nodes {
		t.mu.Lock()
		skip := n.err
		n.times[stepCreateQP][0] = time.Now()
		t.mu.Unlock()
		if skip {
			continue
		}
		res, err := t.createQP(n.id)
		if r = ret(err); err != nil {
			t.perror("failure creating qp", err)
			t.mu.Lock()
			n.err = true
			t.mu.Unlock()
			continue
		}
		n.res = res
		t.end(n, stepCreateQP)
	}
	t.times[stepCreateQP][1] = time.Now()

	param := &rdma.ConnParam{ResponderResources: 1, InitiatorDepth: 1, RetryCount: uint8(t.cfg.retries)}
	async(stepConnect, "connecting\n", "failure rconnecting", func(n *node) error {
		return n.id.Connect(ctx, param)
	})

	// Not a call whose return counts: rdma_disconnect and
	// rdma_destroy_qp, ended by the DISCONNECTED event.
	t.printf("disconnecting\n")
	t.times[stepDisconnect][0] = time.Now()
	started := 0
	for _, n := range t.nodes {
		t.mu.Lock()
		skip := n.err
		if !skip {
			n.times[stepDisconnect][0] = time.Now()
		}
		t.mu.Unlock()
		if skip {
			continue
		}
		n.id.Disconnect()
		if n.res != nil {
			n.res.close()
		}
		started++
	}
	t.wait(ctx, stepDisconnect, started)
	t.times[stepDisconnect][1] = time.Now()
	return r
}
