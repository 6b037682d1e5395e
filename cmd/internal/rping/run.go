// Package rping is the engine of cmd/rping, a drop-in for rdma-core's
// rping (librdmacm/examples/rping.c, v44): the same options, the same
// connection (RC over rdma_cm, port space TCP, port 7174), the same
// ping loop (the client announces a buffer in a 16-byte big-endian
// rping_rdma_info SEND, the server RDMA-READs it, then RDMA-WRITEs it
// back into a second buffer the client announces), the same output
// and exit statuses, so that either side can be rdma-core's.
package rping

import (
	"context"
	"fmt"
	"io"
	"net/netip"
	"sync"
	"time"

	"github.com/rdmastack/rdmastack/cmd/internal/cmnode"
	"github.com/rdmastack/rdmastack/ib"
	"github.com/rdmastack/rdmastack/rdma"
)

// rping's test_state values, which its messages print.
const (
	stateConnectRequest = 2
	stateRouteResolved  = 4
	stateConnected      = 5
	stateReadAdv        = 6
	stateReadComplete   = 7
	stateWriteAdv       = 8
	stateWriteComplete  = 9
	stateDisconnected   = 10
	stateError          = 11
)

const resolveTimeout = 2000 * time.Millisecond

// Main runs rping with args (the words after the program name).
func Main(stdout, stderr io.Writer, args []string) error {
	c, err := parse(stdout, stderr, args)
	if err != nil {
		return err
	}
	r := &runner{cfg: c, stdout: stdout, stderr: stderr, conns: make(map[*rdma.ID]*conn), requests: make(chan *rdma.Event, 8)}
	return r.main()
}

// runner is one rping process: its event channel, the id it listens or
// connects with, and the goroutine that reads the channel's events (the
// C program's cm_thread).
type runner struct {
	cfg            *config
	stdout, stderr io.Writer
	outMu          sync.Mutex

	ch *rdma.EventChannel
	id *rdma.ID

	mu        sync.Mutex
	conns     map[*rdma.ID]*conn
	requests  chan *rdma.Event // CONNECT_REQUESTs for the listener
	fatal     chan struct{}    // closed when an event ends the program (exit(-1))
	fatalOnce sync.Once
}

func (r *runner) printf(w io.Writer, format string, a ...any) {
	r.outMu.Lock()
	defer r.outMu.Unlock()
	fmt.Fprintf(w, format, a...)
}

func (r *runner) debugf(format string, a ...any) {
	if r.cfg.debug {
		r.printf(r.stdout, format, a...)
	}
}

func (r *runner) main() error {
	ch, msg, errno := cmnode.CreateChannel()
	if ch == nil {
		r.printf(r.stderr, "%s\n", msg)
		return &cmnode.ExitError{Code: int(errno)}
	}
	r.ch = ch
	defer ch.Close()
	id, err := ch.CreateID(rdma.PortSpaceTCP, ib.QPTypeRC)
	if err != nil {
		r.printf(r.stderr, "%s\n", cmnode.Perror("rdma_create_id", err))
		return &cmnode.ExitError{Code: -1}
	}
	r.id = id
	r.debugf("created cm_id %p\n", id)
	r.fatal = make(chan struct{})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); r.events(ctx) }()
	defer func() { cancel(); <-done }()

	var ret int
	switch {
	case r.cfg.server == 0:
		ret = r.client()
	case r.cfg.persistent:
		ret = r.persistentServer()
	default:
		ret = r.server()
	}
	r.debugf("destroy cm_id %p\n", id)
	id.Close()
	select {
	case <-r.fatal:
		return &cmnode.ExitError{Code: -1}
	default:
	}
	return cmnode.Return(ret)
}

// die is the C program's exit(-1) from its CM thread.
func (r *runner) die() { r.fatalOnce.Do(func() { close(r.fatal) }) }

// events is rping's cm_thread: it handles each event as
// rping_cma_event_handler does and hands the ones the ping loop waits
// for to their connection.
func (r *runner) events(ctx context.Context) {
	for {
		ev, err := r.ch.GetEvent(ctx)
		if err != nil {
			if ctx.Err() == nil {
				r.printf(r.stderr, "%s\n", cmnode.Perror("rdma_get_cm_event", err))
				r.die()
			}
			return
		}
		ev.Ack()
		which := "child"
		if ev.ID == r.id || ev.Listen == r.id && ev.Type != rdma.EventConnectRequest {
			which = "parent"
		}
		r.debugf("cma_event type %s cma_id %p (%s)\n", ev.Type, ev.ID, which)
		r.mu.Lock()
		cn := r.conns[ev.ID]
		r.mu.Unlock()
		switch ev.Type {
		case rdma.EventAddrResolved:
			if err := ev.ID.ResolveRoute(ctx, resolveTimeout); err != nil {
				r.printf(r.stderr, "%s\n", cmnode.Perror("rdma_resolve_route", err))
				cn.post(stateError)
			}
		case rdma.EventRouteResolved:
			cn.post(stateRouteResolved)
		case rdma.EventConnectRequest:
			r.debugf("child cma %p\n", ev.ID)
			select {
			case r.requests <- ev:
			default: // nobody will accept it (rping's CM thread would block)
				ev.ID.Close()
			}
		case rdma.EventConnectResponse:
			r.debugf("CONNECT_RESPONSE\n")
			cn.post(stateConnected)
		case rdma.EventEstablished:
			r.debugf("ESTABLISHED\n")
			cn.post(stateConnected)
		case rdma.EventAddrError, rdma.EventRouteError, rdma.EventConnectError, rdma.EventUnreachable, rdma.EventRejected:
			r.printf(r.stderr, "cma event %s, error %d\n", cmnode.EventName(ev.Type), cmnode.Status(ev.Status))
			r.die()
			return
		case rdma.EventDisconnected:
			side := "client"
			if r.cfg.server == 1 {
				side = "server"
			}
			r.printf(r.stderr, "%s DISCONNECT EVENT...\n", side)
			cn.disconnect()
		case rdma.EventDeviceRemoval:
			r.printf(r.stderr, "cma detected device removal!!!!\n")
			r.die()
			return
		default:
			r.printf(r.stderr, "unhandled event: %s, ignoring\n", cmnode.EventName(ev.Type))
		}
	}
}

func (r *runner) track(id *rdma.ID, cn *conn) {
	r.mu.Lock()
	r.conns[id] = cn
	r.mu.Unlock()
}

func (r *runner) untrack(id *rdma.ID) {
	r.mu.Lock()
	delete(r.conns, id)
	r.mu.Unlock()
}

// sockaddr is the address to bind or connect: the -a address with the
// port.
func (r *runner) sockaddr() netip.AddrPort { return netip.AddrPortFrom(r.cfg.addr, r.cfg.port) }

func (r *runner) server() int {
	if ret := r.bind(); ret != 0 {
		return ret
	}
	var req *rdma.Event
	select {
	case req = <-r.requests:
	case <-r.fatal:
		return -1
	}
	cn := r.newConn(req.ID)
	return cn.serve(false)
}

func (r *runner) persistentServer() int {
	if ret := r.bind(); ret != 0 {
		return ret
	}
	for {
		select {
		case req := <-r.requests:
			cn := r.newConn(req.ID)
			go cn.serve(true)
		case <-r.fatal:
			return -1
		}
	}
}

func (r *runner) bind() int {
	if err := r.id.Bind(r.sockaddr()); err != nil {
		r.printf(r.stderr, "%s\n", cmnode.Perror("rdma_bind_addr", err))
		return -1
	}
	r.debugf("rdma_bind_addr successful\n")
	r.debugf("rdma_listen\n")
	if err := r.id.Listen(3); err != nil {
		r.printf(r.stderr, "%s\n", cmnode.Perror("rdma_listen", err))
		return -1
	}
	return 0
}

func (r *runner) client() int {
	cn := r.newConn(r.id)
	var src netip.AddrPort
	if r.cfg.src.IsValid() {
		src = netip.AddrPortFrom(r.cfg.src, 0)
	}
	if err := r.id.ResolveAddr(context.Background(), src, r.sockaddr(), resolveTimeout); err != nil {
		r.printf(r.stderr, "%s\n", cmnode.Perror("rdma_resolve_addr", err))
		return -1
	}
	if st := cn.wait(); st != stateRouteResolved {
		r.fail(fmt.Sprintf("waiting for addr/route resolution state %d", st))
		return -1
	}
	r.debugf("rdma_resolve_addr - rdma_resolve_route successful\n")
	return cn.runClient()
}

// fail prints a main-thread failure, unless the CM thread has ended
// the program already.
func (r *runner) fail(msg string) {
	select {
	case <-r.fatal:
	default:
		r.printf(r.stderr, "%s\n", msg)
	}
}
