package rsock

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"

	"golang.org/x/sys/unix"

	"github.com/rdmastack/rdmastack/cmd/internal/cmnode"
)

// Engine is what rstream and riostream share around their run_test:
// the server's listener, client_connect and server_connect, the
// buffer check and the tables (Common.Tests), and how a failed call is
// printed. A program sets the fields, then calls Run.
type Engine struct {
	Name           string // the program's, in its own messages
	Stdout, Stderr io.Writer
	Network        Network       // rsockets, or the kernel's TCP with rstream's -T s
	Count          func(int) int // size_to_count: tests shrink the table with it
	Common         *Common
	Nonblocking    bool // -T n (the default): a refused connect ends in rpoll
	Sockets        bool // rstream's -T s: FailedInPoll's TCP status

	// Options are set_options's socket options for RDMA_INLINE inline
	// (-1 leaves rsockets'). The listener gets ListenInline's.
	Options      func(inline int) Options
	ListenInline int
	// BindClient binds the client to -b, as rstream does; riostream
	// ignores -b there.
	BindClient bool
	// SetOptions, if set, prints what the program's set_options prints;
	// it runs where that is called: on the listener before each accept,
	// on the accepted socket, and on the client's before it connects.
	SetOptions func()

	ln net.Listener
}

// Run is main after the command line: the buffer check and the
// server's listen, then the tests (Common.Tests) with the program's
// connect (which calls Connect and keeps the connection), run_test and
// done (which closes the connection). It returns the C program's
// status.
func (e *Engine) Run(connect func(inline int) int, test func(Result) int, done func()) error {
	c := e.Common
	if c.Custom && c.Size < 0 {
		e.Perror("malloc", unix.ENOMEM)
		return cmnode.Return(-1)
	}
	if c.Dst == "" {
		if code := e.listen(); code != 0 {
			return cmnode.Return(code)
		}
		defer e.ln.Close()
	}
	return cmnode.Return(c.Tests(e.Stdout, e.Count, connect, test, done))
}

// listen is server_listen: a C return value, 0 for success.
func (e *Engine) listen() int {
	c := e.Common
	if c.GID {
		return e.noAFIB()
	}
	addr, err := Resolve(c.Src, c.Port, true, c.Numeric)
	if err != nil {
		return LookupFailed(e.Stdout, "getaddrinfo: ", err)
	}
	if e.ln, err = e.Network.Listen(context.Background(), addr, e.Options(e.ListenInline)); err != nil {
		e.Perror("rbind", err)
		return -1
	}
	return 0
}

// Connect is server_connect (an accept on the listener) or, with -s,
// client_connect, for a test phase whose RDMA_INLINE is inline. It
// returns the connection, or the C return value of the failed call.
func (e *Engine) Connect(inline int) (net.Conn, int) {
	c, o := e.Common, e.Options(inline)
	if c.Dst == "" {
		e.setOptions()
		conn, err := e.ln.Accept()
		if err != nil {
			e.Perror("raccept", err)
			return nil, -1
		}
		SetBuffers(conn, o.Buffer)
		e.setOptions()
		return conn, 0
	}
	if c.GID {
		return nil, e.noAFIB()
	}
	addr, err := Resolve(c.Dst, c.Port, false, c.Numeric)
	if err != nil {
		return nil, LookupFailed(e.Stdout, "getaddrinfo: ", err)
	}
	if e.BindClient && c.Src != "" {
		if o.Local, err = Resolve(c.Src, c.Port, true, c.Numeric); err != nil {
			return nil, LookupFailed(e.Stdout, "getaddrinfo src_addr: ", err)
		}
	}
	e.setOptions()
	conn, err := e.Network.Dial(context.Background(), addr, o)
	if err != nil {
		if code, ok := FailedInPoll(e.Stderr, err, e.Nonblocking, e.Sockets); ok {
			return nil, code
		}
		e.Perror("rconnect", err)
		return nil, -1
	}
	return conn, 0
}

func (e *Engine) setOptions() {
	if e.SetOptions != nil {
		e.SetOptions()
	}
}

// noAFIB refuses -f gid: AF_IB addresses (rdma_getaddrinfo's) are not
// supported yet. rdma-core's programs fail too over TCP, with words
// that depend on whether the machine has RDMA devices.
func (e *Engine) noAFIB() int {
	fmt.Fprintf(e.Stderr, "%s: -f gid: AF_IB addresses are not supported\n", e.Name)
	return -1
}

// Perror prints perror(what)'s line for err on stderr.
func (e *Engine) Perror(what string, err error) {
	fmt.Fprintln(e.Stderr, Perror(what, err))
}

// Recv is recv_xfer's read of len(b) bytes from conn: a peer that
// closed first is rrecv's ECONNRESET.
func Recv(conn net.Conn, b []byte) error {
	_, err := io.ReadFull(conn, b)
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return unix.ECONNRESET
	}
	return err
}
