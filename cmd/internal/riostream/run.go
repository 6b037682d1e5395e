// Package riostream is the engine of cmd/riostream, a drop-in for
// librdmacm's riostream (v44): a benchmark of rsockets' iomap, with the
// same options, wire exchange, table and exit statuses.
//
// Each test maps a window of the transfer size on both sides (riomap,
// here rsocket.Conn.Map) and exchanges 16 bytes each way over the
// stream, which carries the windows' announcements. Then for each
// iteration the client writes its buffer into the server's window
// (riowrite: rsocket.Conn.WriteAt) count times, the last time with a
// new marker in the last byte, and spins until the server's reply puts
// the next marker in its own window's last byte; the server does the
// mirror image. Without -I, -C or -S a size the programs connect twice,
// for a latency table and a bandwidth table, as rstream's do.
package riostream

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"time"

	"golang.org/x/sys/unix"

	"github.com/rdmastack/rdmastack/cmd/internal/rsock"
	"github.com/rdmastack/rdmastack/internal/waitfd"
	"github.com/rdmastack/rdmastack/rdma/rsocket"
)

// Main runs riostream with args (argv[1:]); prog is argv[0].
func Main(prog string, stdout, stderr io.Writer, args []string) error {
	return run(prog, stdout, stderr, args, rsock.RDMA, rsock.SizeToCount)
}

// iomapConn is what the tests need of a connection: rsockets' stream
// and its iomap.
type iomapConn interface {
	net.Conn
	Map(size int, offset int64) (*rsocket.Mapping, error)
	WriteAt(b []byte, off int64) (int, error)
}

// program is one run: the shared engine and the connection.
type program struct {
	rsock.Engine
	c      *config
	conn   iomapConn
	tx, rx rsock.Pattern // format_buf's and verify_buf's counters
}

// run is Main on network nw with size_to_count count (tests shrink the
// table with it).
func run(prog string, stdout, stderr io.Writer, args []string, nw rsock.Network, count func(int) int) error {
	c, err := parse(prog, stdout, stderr, args)
	if err != nil {
		return err
	}
	p := &program{c: c}
	p.Engine = rsock.Engine{
		Name: "riostream", Stdout: stdout, Stderr: stderr, Network: nw, Count: count,
		Common: &c.Common, Nonblocking: c.Nonblocking, Options: p.options, ListenInline: -1,
	}
	return p.Run(p.connect, p.test, func() { p.conn.Close() })
}

// options are set_options's: the buffers, RDMA_IOMAPSIZE 1 and the
// inline size of the phase.
func (p *program) options(inline int) rsock.Options {
	o := rsock.Options{Buffer: 1 << 19, Inline: inline, Backlog: 1, IOMap: 1}
	if p.c.Buffer != 0 {
		o.Buffer = p.c.Buffer
	}
	return o
}

// connect is client_connect (which binds to nothing: riostream ignores
// -b there) or server_connect, on a connection that has iomap.
func (p *program) connect(inline int) int {
	conn, code := p.Connect(inline)
	if code != 0 {
		return code
	}
	ic, ok := conn.(iomapConn)
	if !ok {
		conn.Close()
		p.Perror("riomap", unix.EOPNOTSUPP)
		return -1
	}
	p.conn = ic
	return 0
}

// test is run_test: map the window, sync, then the timed transfers
// and the table line. A failed step leaves the window mapped, as
// riostream's goto out does.
func (p *program) test(r rsock.Result) int {
	m, err := p.conn.Map(r.Size, 0)
	if err != nil {
		p.Perror("riomap", err)
		return -1
	}
	buf := m.Bytes()
	last := &buf[r.Size-1] // poll_byte: the peer's writes end there
	*last = 0xFF
	client := p.c.Dst != ""
	if code := p.sync(client); code != 0 {
		return code
	}
	var marker uint8
	start := time.Now()
	for range r.Iters {
		if !client {
			if code := p.await(buf, marker); code != 0 {
				return code
			}
			marker++
		}
		for range r.Count - 1 {
			if code := p.send(buf); code != 0 {
				return code
			}
		}
		*last = marker
		marker++
		if p.c.Verify {
			p.tx.Fill(buf[:r.Size-1])
		}
		if code := p.send(buf); code != 0 {
			return code
		}
		if client {
			if code := p.await(buf, marker); code != 0 {
				return code
			}
			marker++
		}
	}
	r.Elapsed = time.Since(start)
	r.Write(p.Stdout)
	if err := m.Close(); err != nil {
		p.Perror("riounmap", err)
		return -1
	}
	return 0
}

// sync is sync_test: 16 bytes from the client, then 16 back. They
// follow each side's window announcement on the stream.
func (p *program) sync(client bool) int {
	var b [16]byte
	for _, send := range []bool{client, !client} {
		if send {
			if _, err := p.conn.Write(b[:]); err != nil {
				p.Perror("rsend", err)
				return -1
			}
		} else if err := rsock.Recv(p.conn, b[:]); err != nil {
			p.Perror("rrecv", err)
			return -1
		}
	}
	return 0
}

// send is send_xfer: the whole buffer into the peer's window at offset
// 0.
func (p *program) send(buf []byte) int {
	if _, err := p.conn.WriteAt(buf, 0); err != nil {
		p.Perror("riowrite", err)
		return -1
	}
	return 0
}

// await is recv_xfer: spin until the peer's last write put marker into
// the window's last byte (RC places the bytes before it first), then
// verify the rest with -T v. It yields the processor between looks
// (waitfd.Yield: the peer, or rxe's kernel work, may need this CPU to
// get the write there) and now and then makes sure the connection is
// alive: where riostream spins for ever after its peer died, ours ends
// as rrecv would.
func (p *program) await(buf []byte, marker uint8) int {
	last := &buf[len(buf)-1]
	next := time.Now().Add(probeEvery)
	for i := 0; load(last) != marker; i++ {
		waitfd.Yield()
		if i%1024 == 0 && time.Now().After(next) {
			// A peer that ends its run closes right after its last
			// write, which RC places before its disconnect arrives:
			// a connection found closed after the marker came is the
			// peer's normal end, not an error.
			if err := p.alive(); err != nil && load(last) != marker {
				p.Perror("rrecv", err)
				return -1
			}
			next = time.Now().Add(probeEvery)
		}
	}
	if p.c.Verify {
		if err := p.rx.Verify(buf[:len(buf)-1]); err != nil {
			fmt.Fprintln(p.Stdout, err)
			return -1
		}
	}
	return 0
}

// probeEvery is how often await looks at the connection, and probeWait
// how long a look may take.
const (
	probeEvery = 100 * time.Millisecond
	probeWait  = 2 * time.Millisecond
)

// alive reads with a deadline soon to pass: nothing comes on the
// stream while a side waits for the peer's writes, so the read times
// out unless the connection is closed or broken, which it returns as
// rrecv's error (a closed one as ECONNRESET). (A deadline already past
// would end the read before it looks at the connection.)
func (p *program) alive() error {
	var b [1]byte
	p.conn.SetReadDeadline(time.Now().Add(probeWait))
	_, err := p.conn.Read(b[:])
	p.conn.SetReadDeadline(time.Time{})
	if err == nil || errors.Is(err, os.ErrDeadlineExceeded) {
		return nil
	}
	if errors.Is(err, io.EOF) {
		err = unix.ECONNRESET
	}
	return err
}

// load reads *b afresh each call: the peer's RDMA writes change it
// behind the compiler's back (the window is outside Go's heap).
//
//go:noinline
func load(b *byte) byte { return *b }
