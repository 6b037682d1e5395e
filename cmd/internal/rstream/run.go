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
	"fmt"
	"io"
	"net"
	"time"

	"github.com/rdmastack/rdmastack/cmd/internal/rsock"
)

// Main runs rstream with args (argv[1:]); prog is argv[0].
func Main(prog string, stdout, stderr io.Writer, args []string) error {
	return run(prog, stdout, stderr, args, rsock.RDMA, rsock.SizeToCount)
}

// program is one run: the shared engine, the connection and buffer.
type program struct {
	rsock.Engine
	c       *config
	conn    net.Conn
	buf     []byte
	pattern rsock.Pattern
}

// run is Main on network nw (without -T s) with size_to_count count
// (tests shrink the table with it).
func run(prog string, stdout, stderr io.Writer, args []string, nw rsock.Network, count func(int) int) error {
	c, err := parse(prog, stdout, stderr, args)
	if err != nil {
		return err
	}
	p := &program{c: c}
	p.Engine = rsock.Engine{
		Name: "rstream", Stdout: stdout, Stderr: stderr, Network: nw, Count: count,
		Common: &c.Common, Nonblocking: c.Nonblocking, Sockets: c.sockets,
		Options: p.options, BindClient: true, SetOptions: p.keepalive,
		// rstream sets the listener's options again before each
		// accept, which the accepted rsocket takes: -i for the latency
		// pass, none for the bandwidth pass. Our Listener sizes its
		// connections once, at Listen: both passes get the latency
		// pass's inline size.
		ListenInline: -1,
	}
	if c.sockets {
		p.Network = rsock.TCP
	}
	if !c.Custom {
		p.ListenInline = c.Inline
	}
	n := rsock.TestSizes[len(rsock.TestSizes)-1].Size
	if c.Custom {
		n = max(c.Size, 0)
	}
	p.buf = make([]byte, n)
	return p.Run(p.connect, p.test, func() { p.conn.Close() })
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
		fmt.Fprintf(p.Stdout, "Keepalive: ON\n  time: %d\n", p.c.keepalive)
	}
}

// connect is client_connect or server_connect.
func (p *program) connect(inline int) int {
	var code int
	p.conn, code = p.Connect(inline)
	return code
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
	r.Write(p.Stdout)
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
			p.Perror("rsend", err)
			return -1
		}
		return 0
	}
	if err := rsock.Recv(p.conn, b); err != nil {
		p.Perror("rrecv", err)
		return -1
	}
	if p.c.Verify {
		if err := p.pattern.Verify(b); err != nil {
			fmt.Fprintln(p.Stdout, err)
			return -1
		}
	}
	return 0
}
