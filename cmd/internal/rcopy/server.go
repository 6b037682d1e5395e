package rcopy

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/netip"
	"os"

	"golang.org/x/sys/unix"

	"github.com/rdmastack/rdmastack/cmd/internal/cmnode"
	"github.com/rdmastack/rdmastack/cmd/internal/rsock"
)

// serverFile is the server's open destination. Like rcopy's globals it
// outlives a connection: a client that leaves without closing leaves
// the next one "cannot open another file".
type serverFile struct {
	f      *os.File
	mapped bool // rcopy's file_addr is set: a write was tried (even one whose mmap failed)
}

// server is server_run: listen on the port's IPv4 wildcard (glibc's
// first answer for a passive NULL host), then serve one client at a
// time.
func (p *program) server(ctx context.Context) error {
	addr, err := rsock.Resolve("", p.port, true, true)
	if err != nil {
		return cmnode.Return(p.lookupFailed(err))
	}
	ln, err := p.nw.Listen(ctx, addr, rsock.Options{Backlog: 1, Inline: -1})
	if err != nil {
		p.perror("rbind failed", err)
		return cmnode.Return(-1)
	}
	defer ln.Close()
	stop := context.AfterFunc(ctx, func() { ln.Close() })
	defer stop()
	var file serverFile
	defer file.close()
	for {
		fmt.Fprint(p.stdout, "waiting for connection...")
		conn, err := ln.Accept()
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			p.perror("raccept", err)
			return cmnode.Return(-1)
		}
		fmt.Fprintf(p.stdout, "client: %s\n", peer(conn.RemoteAddr()))
		stopConn := context.AfterFunc(ctx, func() { conn.Close() })
		p.serve(conn, &file)
		stopConn()
		conn.Close()
	}
}

// peer is the client's address as rcopy's _ntop prints it.
func peer(a net.Addr) string {
	var ap netip.AddrPort
	if x, ok := a.(interface{ AddrPort() netip.AddrPort }); ok {
		ap = x.AddrPort()
	} else if v, err := netip.ParseAddrPort(a.String()); err == nil {
		ap = v
	}
	if !ap.Addr().IsValid() {
		return ""
	}
	return ap.Addr().Unmap().String()
}

// serve is server_process: requests until one fails or the client goes.
func (p *program) serve(conn net.Conn, file *serverFile) {
	for {
		h, ok := p.recvHeader(conn)
		if !ok {
			return
		}
		var ok2 bool
		switch h.Command {
		case CmdOpen:
			ok2 = p.open(conn, h, file)
		case CmdClose:
			p.closeFile(conn, h, file)
			ok2 = true
		case CmdWrite:
			ok2 = p.write(conn, h, file)
		default:
			conn.Write(Response(h, uint32(unix.EINVAL)))
		}
		if !ok2 {
			return
		}
	}
}

// recvHeader is msg_recv_hdr: a header, or false when the peer went or
// sent a bad one (which it reports).
func (p *program) recvHeader(conn net.Conn) (Header, bool) {
	var b [HeaderSize]byte
	if _, err := io.ReadFull(conn, b[:]); err != nil {
		return Header{}, false
	}
	h, err := DecodeHeader(b[:])
	if err != nil {
		fmt.Fprintln(p.stdout, err)
		return h, false
	}
	return h, true
}

// open is server_open; false ends the connection, as a non-zero return
// does in rcopy.
func (p *program) open(conn net.Conn, h Header, file *serverFile) bool {
	fmt.Fprint(p.stdout, "opening: ")
	if file.mapped || file.f != nil {
		fmt.Fprintln(p.stdout, "cannot open another file")
		conn.Write(Response(h, uint32(unix.EBUSY)))
		return false
	}
	body := make([]byte, int(h.Len)-HeaderSize)
	if _, err := io.ReadFull(conn, body); err != nil {
		// rcopy answers with what its receive returned: 0 at the end.
		fmt.Fprintln(p.stdout, "error receiving path")
		conn.Write(Response(h, 0))
		return true
	}
	path := Path(body)
	fmt.Fprintf(p.stdout, "%s, ", path)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_TRUNC, perm(h.Data))
	if err != nil {
		fmt.Fprintln(p.stdout, "unable to open destination file")
		st := status(err)
		conn.Write(Response(h, st))
		return false
	}
	file.f = f
	conn.Write(Response(h, 0))
	return true
}

// perm is open(2)'s mode argument, st_mode's permission bits, as an
// os.FileMode.
func perm(mode uint32) fs.FileMode {
	m := fs.FileMode(mode & 0o777)
	if mode&unix.S_ISUID != 0 {
		m |= fs.ModeSetuid
	}
	if mode&unix.S_ISGID != 0 {
		m |= fs.ModeSetgid
	}
	if mode&unix.S_ISVTX != 0 {
		m |= fs.ModeSticky
	}
	return m
}

// closeFile is server_close.
func (p *program) closeFile(conn net.Conn, h Header, file *serverFile) {
	fmt.Fprint(p.stdout, "closing...")
	conn.Write(Response(h, 0))
	file.close()
	fmt.Fprintln(p.stdout, "done")
}

func (f *serverFile) close() {
	if f.f != nil {
		f.f.Close()
	}
	*f = serverFile{}
}

// write is server_write: the size, then the file's bytes straight into
// the destination.
func (p *program) write(conn net.Conn, h Header, file *serverFile) bool {
	fmt.Fprint(p.stdout, "transferring")
	if file.f == nil {
		fmt.Fprintln(p.stdout, "...file not opened")
		conn.Write(Response(h, uint32(unix.EINVAL)))
		return false
	}
	if h.Len != WriteSize {
		fmt.Fprintf(p.stdout, "...invalid message length %d\n", h.Len)
		conn.Write(Response(h, uint32(unix.EINVAL)))
		return false
	}
	var b [8]byte
	if _, err := io.ReadFull(conn, b[:]); err != nil {
		conn.Write(Response(h, 0))
		return true
	}
	size := order.Uint64(b[:])
	if int64(size) < 0 {
		// ftruncate's off_t is negative: EINVAL, and rcopy answers -1.
		conn.Write(Response(h, ^uint32(0)))
		return false
	}
	if err := file.f.Truncate(int64(size)); err != nil {
		conn.Write(Response(h, ^uint32(0)))
		return false
	}
	file.mapped = true
	if size == 0 {
		// mmap(2) of no bytes fails.
		fmt.Fprintln(p.stdout, "...error mapping file")
		conn.Write(Response(h, uint32(unix.EINVAL)))
		return false
	}
	fmt.Fprintf(p.stdout, "...%d bytes...", size)
	if _, err := file.f.Seek(0, io.SeekStart); err != nil {
		conn.Write(Response(h, status(err)))
		return false
	}
	if n, err := io.CopyN(file.f, conn, int64(size)); err != nil {
		fmt.Fprintln(p.stdout, "...error receiving data")
		if uint64(n) < size && (err == io.EOF || err == io.ErrUnexpectedEOF) {
			// rcopy answers with its receive's 0 and reads on.
			conn.Write(Response(h, 0))
			return true
		}
		conn.Write(Response(h, status(err)))
		return false
	}
	conn.Write(Response(h, 0))
	return true
}
