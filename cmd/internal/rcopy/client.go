package rcopy

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/rdmastack/rdmastack/cmd/internal/rsock"
)

// client is client_run; it returns rcopy's return value.
func (p *program) client(ctx context.Context) int {
	addr, err := rsock.Resolve(p.dst, p.port, false, false)
	if err != nil {
		return p.lookupFailed(err)
	}
	conn, err := p.nw.Dial(ctx, addr, rsock.Options{Inline: -1})
	if err != nil {
		p.perror("rconnect failed\n", err)
		return -1
	}
	defer conn.Close()
	f, size, ret := p.openRemote(conn)
	if ret != 0 {
		return ret
	}
	defer f.Close()
	fmt.Fprint(p.stdout, "transferring")
	if _, err := conn.Write(WriteMessage(size)); err != nil {
		p.closeRemote(conn)
		return -1
	}
	fmt.Fprint(p.stdout, "...")
	start := time.Now()
	if _, err := io.CopyN(conn, f, int64(size)); err != nil {
		ret = -1
	} else {
		ret = p.response(conn, CmdWrite)
	}
	elapsed := time.Since(start)
	p.closeRemote(conn)
	if ret == 0 {
		usec := float32(elapsed.Microseconds())
		fmt.Fprintf(p.stdout, "%d bytes in %.2f seconds = %.2f Gb/sec\n",
			int64(size), float64(usec)/1000000., float64(size*8)/(1000.*float64(usec)))
	}
	return ret
}

// openRemote is client_open: the source, its size, and the server's
// answer to opening the destination with its mode.
func (p *program) openRemote(conn net.Conn) (*os.File, uint64, int) {
	fmt.Fprint(p.stdout, "opening...")
	f, err := os.Open(p.src)
	if err != nil {
		return nil, 0, -1
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, 0, -1
	}
	size := uint64(fi.Size())
	if size == 0 {
		// rcopy mmaps the source: no bytes is EINVAL.
		f.Close()
		return nil, 0, int(unix.EINVAL)
	}
	var mode uint32
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		mode = st.Mode
	}
	msg := OpenMessage(p.dstFile, mode)
	if n, err := conn.Write(msg); err != nil {
		f.Close()
		if n == 0 {
			n = -1
		}
		return nil, 0, n
	}
	if ret := p.response(conn, CmdOpen); ret != 0 {
		f.Close()
		return nil, 0, ret
	}
	return f, size, 0
}

// closeRemote is client_close.
func (p *program) closeRemote(conn net.Conn) {
	fmt.Fprint(p.stdout, "closing...")
	if _, err := conn.Write(Header{Command: CmdClose, Len: HeaderSize}.Append(nil)); err != nil {
		return
	}
	if p.response(conn, CmdClose) == 0 {
		fmt.Fprintln(p.stdout, "done")
	}
}

// response is msg_get_resp: the status of the response to cmd, or -1
// when there is none or it is not one (which it reports).
func (p *program) response(conn net.Conn, cmd Command) int {
	h, ok := p.recvHeader(conn)
	if !ok {
		return -1
	}
	st, err := CheckResponse(h, cmd)
	if err != nil {
		fmt.Fprintln(p.stdout, err)
		return -1
	}
	return int(int32(st))
}
