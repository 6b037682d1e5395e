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
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"runtime"
	"time"

	"golang.org/x/sys/unix"

	"github.com/rdmastack/rdmastack/cmd/internal/cmnode"
	"github.com/rdmastack/rdmastack/cmd/internal/rsock"
	"github.com/rdmastack/rdmastack/rdma/rsocket"
)

// Main runs riostream with args (argv[1:]); prog is argv[0].
func Main(prog string, stdout, stderr io.Writer, args []string) error {
	return (&program{prog: prog, stdout: stdout, stderr: stderr, nw: rsock.RDMA, count: rsock.SizeToCount}).main(args)
}

// iomapConn is what the tests need of a connection: rsockets' stream
// and its iomap.
type iomapConn interface {
	net.Conn
	Map(size int, offset int64) (*rsocket.Mapping, error)
	WriteAt(b []byte, off int64) (int, error)
}

// program is one run: its options, listener and connection.
type program struct {
	prog           string
	stdout, stderr io.Writer
	nw             rsock.Network
	count          func(int) int // size_to_count: tests shrink the table with it
	c              *config
	ln             net.Listener
	conn           iomapConn
	tx, rx         rsock.Pattern // format_buf's and verify_buf's counters
}

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
	p.c = c
	if c.Custom && c.Size < 0 {
		fmt.Fprintln(p.stderr, rsock.Perror("malloc", unix.ENOMEM))
		return exit(-1)
	}
	if c.Dst == "" {
		if code := p.listen(); code != 0 {
			return exit(code)
		}
		defer p.ln.Close()
	}
	return exit(c.Tests(p.stdout, p.count, p.connect, p.test, func() { p.conn.Close() }))
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

// listen is server_listen: a C return value, 0 for success.
func (p *program) listen() int {
	if p.c.GID {
		return p.noAFIB()
	}
	addr, err := rsock.Resolve(p.c.Src, p.c.Port, true, p.c.Numeric)
	if err != nil {
		return rsock.LookupFailed(p.stdout, "getaddrinfo: ", err)
	}
	if p.ln, err = p.nw.Listen(context.Background(), addr, p.options(-1)); err != nil {
		fmt.Fprintln(p.stderr, rsock.Perror("rbind", err))
		return -1
	}
	return 0
}

// connect is client_connect (which binds to nothing: riostream ignores
// -b there) or server_connect.
func (p *program) connect(inline int) int {
	o := p.options(inline)
	var conn net.Conn
	if p.c.Dst == "" {
		var err error
		if conn, err = p.ln.Accept(); err != nil {
			fmt.Fprintln(p.stderr, rsock.Perror("raccept", err))
			return -1
		}
		rsock.SetBuffers(conn, o.Buffer)
	} else {
		if p.c.GID {
			return p.noAFIB()
		}
		addr, err := rsock.Resolve(p.c.Dst, p.c.Port, false, p.c.Numeric)
		if err != nil {
			return rsock.LookupFailed(p.stdout, "getaddrinfo: ", err)
		}
		if conn, err = p.nw.Dial(context.Background(), addr, o); err != nil {
			if code, ok := rsock.FailedInPoll(p.stderr, err, p.c.Nonblocking, false); ok {
				return code
			}
			fmt.Fprintln(p.stderr, rsock.Perror("rconnect", err))
			return -1
		}
	}
	ic, ok := conn.(iomapConn)
	if !ok {
		conn.Close()
		fmt.Fprintln(p.stderr, rsock.Perror("riomap", unix.EOPNOTSUPP))
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
		fmt.Fprintln(p.stderr, rsock.Perror("riomap", err))
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
	r.Write(p.stdout)
	if err := m.Close(); err != nil {
		fmt.Fprintln(p.stderr, rsock.Perror("riounmap", err))
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
				fmt.Fprintln(p.stderr, rsock.Perror("rsend", err))
				return -1
			}
		} else if _, err := io.ReadFull(p.conn, b[:]); err != nil {
			if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
				err = unix.ECONNRESET
			}
			fmt.Fprintln(p.stderr, rsock.Perror("rrecv", err))
			return -1
		}
	}
	return 0
}

// send is send_xfer: the whole buffer into the peer's window at offset
// 0.
func (p *program) send(buf []byte) int {
	if _, err := p.conn.WriteAt(buf, 0); err != nil {
		fmt.Fprintln(p.stderr, rsock.Perror("riowrite", err))
		return -1
	}
	return 0
}

// await is recv_xfer: spin until the peer's last write put marker into
// the window's last byte (RC places the bytes before it first), then
// verify the rest with -T v. It yields the processor between looks and
// now and then makes sure the connection is alive: where riostream
// spins for ever after its peer died, ours ends as rrecv would.
func (p *program) await(buf []byte, marker uint8) int {
	last := &buf[len(buf)-1]
	next := time.Now().Add(probeEvery)
	for i := 0; load(last) != marker; i++ {
		runtime.Gosched()
		if i%1024 == 0 && time.Now().After(next) {
			// A peer that ends its run closes right after its last
			// write, which RC places before its disconnect arrives:
			// a connection found closed after the marker came is the
			// peer's normal end, not an error.
			if err := p.alive(); err != nil && load(last) != marker {
				fmt.Fprintln(p.stderr, rsock.Perror("rrecv", err))
				return -1
			}
			next = time.Now().Add(probeEvery)
		}
	}
	if p.c.Verify {
		if err := p.rx.Verify(buf[:len(buf)-1]); err != nil {
			fmt.Fprintln(p.stdout, err)
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

// noAFIB refuses -f gid: AF_IB addresses (rdma_getaddrinfo's) are not
// supported yet.
func (p *program) noAFIB() int {
	fmt.Fprintln(p.stderr, "riostream: -f gid: AF_IB addresses are not supported")
	return -1
}
