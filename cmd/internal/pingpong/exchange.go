package pingpong

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"syscall"

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

// records is how many address records each side sends: one, but
// srq_pingpong always sends maxQP (a zero record for each QP it lacks),
// each its own write.
func (k Kind) records() int {
	if k == SRQ {
		return maxQP
	}
	return 1
}

// padded is my as k's exchange sends it.
func padded(k Kind, my []dest) []dest {
	return append(my[:len(my):len(my)], make([]dest, k.records()-len(my))...)
}

// readRecords reads n records; srq_pingpong names a short one's index
// (where a peer gone mid-exchange leaves it reading for ever; ours
// fails).
func readRecords(conn net.Conn, n int) ([]dest, error) {
	rem := make([]dest, n)
	msg := make([]byte, msgLen)
	for i := range rem {
		if got, err := io.ReadFull(conn, msg); err != nil {
			return nil, fail("%d/%d: Couldn't read remote address [%d]", got, msgLen, i)
		}
		rem[i] = decode(msg)
	}
	return rem, nil
}

// clientExchange connects to the server, sends ours and reads theirs.
func clientExchange(k Kind, server string, port int, my []dest) ([]dest, error) {
	conn, err := net.Dial("tcp", net.JoinHostPort(server, strconv.Itoa(port)))
	if err != nil {
		return nil, fail("Couldn't connect to %s:%d", server, port)
	}
	defer conn.Close()
	for _, d := range padded(k, my) {
		if _, err := conn.Write(d.encode()); err != nil {
			return nil, fail("Couldn't send local address")
		}
	}
	var rem []dest
	if k == SRQ {
		if rem, err = readRecords(conn, maxQP); err != nil {
			return nil, err
		}
	} else {
		msg := make([]byte, msgLen)
		if _, err := io.ReadFull(conn, msg); err != nil {
			return nil, fail("client read/write: %s\nCouldn't read/write remote address", readErrText(err))
		}
		rem = []dest{decode(msg)}
	}
	if _, err := conn.Write([]byte("done\x00")); err != nil {
		if k == SRQ {
			return nil, fail("client write: %v", errText(err))
		}
		return nil, fail("Couldn't read/write remote address")
	}
	return rem, nil
}

// serverExchange accepts one client, reads its addresses, connects (the
// callback), answers with ours and waits for "done".
func serverExchange(k Kind, port int, my []dest, connect func([]dest) error) ([]dest, error) {
	ln, err := net.Listen("tcp", ":"+strconv.Itoa(port))
	if err != nil {
		return nil, fail("Couldn't listen to port %d", port)
	}
	conn, err := ln.Accept()
	ln.Close()
	if err != nil {
		return nil, fail("accept() failed")
	}
	defer conn.Close()
	var rem []dest
	if k == SRQ {
		if rem, err = readRecords(conn, maxQP); err != nil {
			return nil, err
		}
	} else {
		msg := make([]byte, msgLen)
		if n, err := io.ReadFull(conn, msg); err != nil {
			return nil, fail("%d/%d: Couldn't read remote address", n, msgLen)
		}
		rem = []dest{decode(msg)}
	}
	if err := connect(rem); err != nil {
		return nil, fmt.Errorf("%w\nCouldn't connect to remote QP", err)
	}
	sendErr := "Couldn't send/recv local address"
	if k == SRQ {
		sendErr = "Couldn't send local address"
	}
	for _, d := range padded(k, my) {
		if _, err := conn.Write(d.encode()); err != nil {
			return nil, fail("%s", sendErr)
		}
	}
	done := make([]byte, 5)
	if _, err := io.ReadFull(conn, done); err != nil {
		if k == SRQ {
			// srq_pingpong's perror after a short read of "done".
			return nil, fail("client write: %s", errText(err))
		}
		return nil, fail("%s", sendErr)
	}
	return rem, nil
}

// errText is the strerror a C program's perror would print after err: a
// short read (EOF) leaves errno 0, "Success".
// readErrText is what perror prints after a failed read: the read's
// error, or for a short read (the server closed the connection, as it
// does when it cannot connect its QP) the errno libibverbs left behind.
// That is ENOSPC on the kernels we test: the answer to its probe of
// write() commands through ioctl, which nothing clears before the
// exchange (seen with rdma-core's pingpongs on siw, where an RC QP cannot
// reach RTS without iw_cm).
func readErrText(err error) string {
	var errno syscall.Errno
	if errors.As(err, &errno) {
		return errText(err)
	}
	return errText(syscall.ENOSPC)
}

func errText(err error) string {
	var errno syscall.Errno
	if errors.As(err, &errno) {
		s := errno.Error() // strerror's words, but for the capital
		return strings.ToUpper(s[:1]) + s[1:]
	}
	return "Success"
}
