package pingpong

import (
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"

	"github.com/rdmastack/rdmastack/ib"
)

// dest is one side's address as the exchange carries it.
type dest struct {
	lid, qpn, psn int
	gid           ib.GID
}

// msgLen is sizeof "0000:000000:000000:00000000000000000000000000000000",
// the fixed size of every message, NUL included.
const msgLen = 52

// wireGID writes the GID as rdma-core's gid_to_wire_gid does: four
// big-endian 32-bit words, each as 8 hex digits.
func wireGID(g ib.GID) string {
	var b strings.Builder
	for i := 0; i < 4; i++ {
		fmt.Fprintf(&b, "%08x", binary.BigEndian.Uint32(g[i*4:]))
	}
	return b.String()
}

func (d dest) encode() []byte {
	msg := make([]byte, msgLen)
	copy(msg, fmt.Sprintf("%04x:%06x:%06x:%s", d.lid, d.qpn, d.psn, wireGID(d.gid)))
	return msg
}

// decode parses a message as rdma-core's sscanf("%x:%x:%x:%s") and
// wire_gid_to_gid do.
func decode(msg []byte) dest {
	s := string(msg)
	if i := strings.IndexByte(s, 0); i >= 0 {
		s = s[:i]
	}
	parts := strings.SplitN(s, ":", 4)
	var d dest
	for i, p := range parts {
		if i == 3 {
			for w := 0; w < 4 && len(p) >= w*8+1; w++ {
				end := min(len(p), w*8+8)
				v, _ := strconv.ParseUint(p[w*8:end], 16, 32)
				binary.BigEndian.PutUint32(d.gid[w*4:], uint32(v))
			}
			break
		}
		v, _ := strconv.ParseUint(p, 16, 32)
		switch i {
		case 0:
			d.lid = int(v)
		case 1:
			d.qpn = int(v)
		case 2:
			d.psn = int(v)
		}
	}
	return d
}

// clientExchange connects to the server, sends ours and reads theirs.
func clientExchange(server string, port int, my dest) (dest, error) {
	conn, err := net.Dial("tcp", net.JoinHostPort(server, strconv.Itoa(port)))
	if err != nil {
		return dest{}, fail("Couldn't connect to %s:%d", server, port)
	}
	defer conn.Close()
	if _, err := conn.Write(my.encode()); err != nil {
		return dest{}, fail("Couldn't send local address")
	}
	msg := make([]byte, msgLen)
	if _, err := io.ReadFull(conn, msg); err != nil {
		return dest{}, fail("Couldn't read/write remote address")
	}
	if _, err := conn.Write([]byte("done\x00")); err != nil {
		return dest{}, fail("Couldn't read/write remote address")
	}
	return decode(msg), nil
}

// serverExchange accepts one client, reads its address, connects (the
// callback), answers with ours and waits for "done".
func serverExchange(port int, my dest, connect func(dest) error) (dest, error) {
	ln, err := net.Listen("tcp", ":"+strconv.Itoa(port))
	if err != nil {
		return dest{}, fail("Couldn't listen to port %d", port)
	}
	conn, err := ln.Accept()
	ln.Close()
	if err != nil {
		return dest{}, fail("accept() failed")
	}
	defer conn.Close()
	msg := make([]byte, msgLen)
	if n, err := io.ReadFull(conn, msg); err != nil {
		return dest{}, fail("%d/%d: Couldn't read remote address", n, msgLen)
	}
	rem := decode(msg)
	if err := connect(rem); err != nil {
		return dest{}, fmt.Errorf("%w\nCouldn't connect to remote QP", err)
	}
	if _, err := conn.Write(my.encode()); err != nil {
		return dest{}, fail("Couldn't send/recv local address")
	}
	done := make([]byte, 5)
	if _, err := io.ReadFull(conn, done); err != nil {
		return dest{}, fail("Couldn't send/recv local address")
	}
	return rem, nil
}
