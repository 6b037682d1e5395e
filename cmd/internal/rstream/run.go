// Package rstream is the engine of cmd/rstream, a drop-in for
// librdmacm's rstream (v44): a stream socket benchmark, over rsockets
// or, with -T s, the kernel's TCP, with the same options, wire exchange,
// table and exit statuses.
//
// The client (-s) and the server (-b, or neither) first exchange 16
// bytes each way, then for each iteration the client sends the
// transfers and the server sends them back. Without -I, -C or -S a size
// the programs connect twice, for a latency table (one transfer,
// size_to_count iterations) and a bandwidth table (size_to_count
// transfers, one iteration) over the table's sizes.
package rstream

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"time"

	"golang.org/x/sys/unix"

	"github.com/rdmastack/rdmastack/cmd/internal/cmnode"
	"github.com/rdmastack/rdmastack/cmd/internal/rsock"
)

// Main runs rstream with args (argv[1:]); prog is argv[0].
func Main(prog string, stdout, stderr io.Writer, args []string) error {
	return (&program{prog: prog, stdout: stdout, stderr: stderr, rdma: rsock.RDMA, count: rsock.SizeToCount}).main(args)
}

// program is one run: its options, connection and buffer.
type program struct {
	prog           string
	stdout, stderr io.Writer
	rdma           rsock.Network // the network without -T s
	count          func(int) int // size_to_count: tests shrink the table with it
	c              *config
	nw             rsock.Network
	ln             net.Listener
	conn           net.Conn
	buf            []byte
	pattern        rsock.Pattern
}

// exit is the C program's return value as an error.
func exit(code int) error {
	if code == 0 {
		return nil
	}
	return &cmnode.ExitError{Code: code}
}

func (p *program) main(args []string) error {
	c, err := parse(p.prog, p.stdout, p.stderr, args)
	if err != nil {
		return err
	}
	p.c, p.nw = c, p.rdma
	if c.sockets {
		p.nw = rsock.TCP
	}
	n := rsock.TestSizes[len(rsock.TestSizes)-1].Size
	if c.Custom {
		n = c.Size
	}
	if n < 0 {
		fmt.Fprintln(p.stderr, "malloc: "+strerror(unix.ENOMEM))
		return exit(-1)
	}
	p.buf = make([]byte, n)
	if c.Dst == "" {
		if code := p.listen(); code != 0 {
			return exit(code)
		}
		defer p.ln.Close()
	}
	return exit(c.Tests(p.stdout, p.count, p.connect, p.test, func() { p.conn.Close() }))
}

// options are set_options's socket options; inline -1 leaves rsockets'.
func (p *program) options(inline int) rsock.Options {
	o := rsock.Options{Buffer: 1 << 19, Inline: inline, Backlog: 1}
	if p.c.Buffer != 0 {
		o.Buffer = p.c.Buffer
	}
	if p.c.keepalive != 0 {
		o.KeepAlive = time.Duration(p.c.keepalive) * time.Second
	}
	return o
}

// keepalive prints what set_options prints for -k after setting it on
// a socket.
func (p *program) keepalive() {
	if p.c.keepalive != 0 {
		fmt.Fprintf(p.stdout, "Keepalive: ON\n  time: %d\n", p.c.keepalive)
	}
}

// listen is server_listen: a C return value, 0 for success.
func (p *program) listen() int {
	if p.c.GID {
		return p.noAFIB()
	}
	addr, err := rsock.Resolve(p.c.Src, p.c.Port, true, p.c.Numeric)
	if err != nil {
		return rsock.LookupFailed(p.stdout, "getaddrinfo: ", err)
	}
	// rstream sets the listener's options again before each accept,
	// which the accepted rsocket takes: -i for the latency pass, none
	// for the bandwidth pass. Our Listener sizes its connections once,
	// at Listen: both passes get the latency pass's inline size.
	inline := -1
	if !p.c.Custom {
		inline = p.c.Inline
	}
	p.ln, err = p.nw.Listen(context.Background(), addr, p.options(inline))
	if err != nil {
		p.perror("rbind", err)
		return -1
	}
	return 0
}

// connect is client_connect or server_connect.
func (p *program) connect(inline int) int {
	o := p.options(inline)
	if p.c.Dst == "" {
		p.keepalive() // set_options on the listener
		conn, err := p.ln.Accept()
		if err != nil {
			p.perror("raccept", err)
			return -1
		}
		rsock.SetBuffers(conn, o.Buffer)
		p.conn = conn
		p.keepalive()
		return 0
	}
	if p.c.GID {
		return p.noAFIB()
	}
	addr, err := rsock.Resolve(p.c.Dst, p.c.Port, false, p.c.Numeric)
	if err != nil {
		return rsock.LookupFailed(p.stdout, "getaddrinfo: ", err)
	}
	if p.c.Src != "" {
		if o.Local, err = rsock.Resolve(p.c.Src, p.c.Port, true, p.c.Numeric); err != nil {
			return rsock.LookupFailed(p.stdout, "getaddrinfo src_addr: ", err)
		}
	}
	p.keepalive()
	conn, err := p.nw.Dial(context.Background(), addr, o)
	if err != nil {
		if code, ok := rsock.FailedInPoll(p.stderr, err, p.c.Nonblocking, p.c.sockets); ok {
			return code
		}
		p.perror("rconnect", err)
		return -1
	}
	p.conn = conn
	return 0
}

// test is run_test: the 16-byte sync, then the timed transfers, then
// the table line.
func (p *program) test(r rsock.Result) int {
	client := p.c.Dst != ""
	if code := p.xfer(client, 16); code != 0 {
		return code
	}
	if code := p.xfer(!client, 16); code != 0 {
		return code
	}
	start := time.Now()
	for range r.Iters {
		for range r.Count {
			if code := p.xfer(client, r.Size); code != 0 {
				return code
			}
		}
		for range r.Count {
			if code := p.xfer(!client, r.Size); code != 0 {
				return code
			}
		}
	}
	r.Elapsed = time.Since(start)
	r.Write(p.stdout)
	return 0
}

// xfer is send_xfer (send) or recv_xfer of size bytes.
func (p *program) xfer(send bool, size int) int {
	b := p.buf[:size]
	if send {
		if p.c.Verify {
			p.pattern.Fill(b)
		}
		if _, err := p.conn.Write(b); err != nil {
			p.perror("rsend", err)
			return -1
		}
		return 0
	}
	if _, err := io.ReadFull(p.conn, b); err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			err = unix.ECONNRESET
		}
		p.perror("rrecv", err)
		return -1
	}
	if p.c.Verify {
		if err := p.pattern.Verify(b); err != nil {
			fmt.Fprintln(p.stdout, err)
			return -1
		}
	}
	return 0
}

// noAFIB refuses -f gid: AF_IB addresses (rdma_getaddrinfo's) are not
// supported yet. rdma-core's rstream fails too over TCP, with words that
// depend on whether the machine has RDMA devices.
func (p *program) noAFIB() int {
	fmt.Fprintln(p.stderr, "rstream: -f gid: AF_IB addresses are not supported")
	return -1
}

// perror prints perror(what)'s line for err.
func (p *program) perror(what string, err error) {
	fmt.Fprintln(p.stderr, rsock.Perror(what, err))
}

// strerror is glibc's text for e (Go's, capitalised).
func strerror(e unix.Errno) string {
	return cmnode.Perror("x", e)[len("x: "):]
}
