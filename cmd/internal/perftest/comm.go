package perftest

import (
	"context"
	"io"
	"net"
	"strconv"
	"time"
)

// channel is the out-of-band link both ends exchange their messages
// over: perftest's TCP socket (or, with -R, its rdma_cm control QP).
type channel interface {
	// write sends one message; read receives one of exactly n bytes.
	write(b []byte) error
	read(n int) ([]byte, error)
	close() error
}

// tcpChannel is perftest's default exchange: one TCP connection on
// which each message is one write() and one read() of its size.
type tcpChannel struct{ c net.Conn }

func (t *tcpChannel) write(b []byte) error {
	_, err := t.c.Write(b)
	return err
}

func (t *tcpChannel) read(n int) ([]byte, error) {
	b := make([]byte, n)
	_, err := io.ReadFull(t.c, b)
	return b, err
}

func (t *tcpChannel) close() error { return t.c.Close() }

// dialTCP is ethernet_client_connect: one attempt (perftest does not
// retry), IPv4 only.
func dialTCP(host string, port int) (channel, error) {
	c, err := net.DialTimeout("tcp4", net.JoinHostPort(host, strconv.Itoa(port)), 20*time.Second)
	if err != nil {
		if _, ok := err.(*net.DNSError); ok {
			return nil, fail("Problem in resolving basic address and port\n" + connectFailed)
		}
		return nil, fail("Couldn't connect to " + host + ":" + strconv.Itoa(port) + "\n" + connectFailed)
	}
	return &tcpChannel{c}, nil
}

// connectFailed is what follows a failed establish_connection.
const connectFailed = "Unable to open file descriptor for socket connection Unable to init the socket connection\n"

// listenTCP is ethernet_server_connect: listen on the IPv4 wildcard,
// accept one client, stop listening.
func listenTCP(ctx context.Context, port int) (channel, error) {
	var lc net.ListenConfig
	l, err := lc.Listen(ctx, "tcp4", ":"+strconv.Itoa(port))
	if err != nil {
		return nil, fail("Couldn't listen to port " + strconv.Itoa(port) + "\n" + connectFailed)
	}
	defer l.Close()
	c, err := l.Accept()
	if err != nil {
		return nil, fail("server accept: " + err.Error() + "\naccept() failed\n" + connectFailed)
	}
	return &tcpChannel{c}, nil
}

// exchange is one symmetric step: the client writes and then reads, the
// server reads and then writes. The errors carry perftest's words for the
// step: what (keys or data) names the message kind.
type exchanger struct {
	ch     channel
	client bool
	cm     bool // key messages as rdma_cm's binary struct
}

type msgKind int

const (
	dataMsg msgKind = iota // ctx_xchg_data: versions, system data, MTU, reports
	keyMsg                 // ctx_hand_shake: key messages
)

func (x *exchanger) xchg(kind msgKind, my []byte) ([]byte, error) {
	w := func() error {
		if err := x.ch.write(my); err != nil {
			what := "Couldn't send reports\n"
			if kind == keyMsg {
				what = "Couldn't send local address\n"
			}
			line := " Unable to write from socket/rdma_cm\n"
			if x.client {
				line = " Unable to write to socket/rdma_cm\n"
			}
			return fail("client write: " + errText(err) + "\n" + what + line)
		}
		return nil
	}
	r := func() ([]byte, error) {
		b, err := x.ch.read(len(my))
		if err != nil {
			what := "ethernet_read_data: Couldn't read reports\n"
			if kind == keyMsg {
				what = "ethernet_read_keys: Couldn't read remote address\n"
			}
			line := " Unable to read to socket/rdma_cm\n"
			if x.client {
				line = " Unable to read from socket/rdma_cm\n"
			}
			return nil, fail(what + line)
		}
		return b, nil
	}
	if x.client {
		if err := w(); err != nil {
			return nil, err
		}
		return r()
	}
	b, err := r()
	if err != nil {
		return nil, err
	}
	return b, w()
}

// errText is perror's text for a write error.
func errText(err error) string {
	if ne, ok := err.(*net.OpError); ok && ne.Err != nil {
		return ne.Err.Error()
	}
	return err.Error()
}

// handshake is ctx_hand_shake over key messages.
func (x *exchanger) handshake(my *Dest, withGID bool, gidIndex int) (Dest, error) {
	if x.cm {
		b, err := x.xchg(keyMsg, encodeKeyCM(my, gidIndex))
		if err != nil {
			return Dest{}, err
		}
		return decodeKeyCM(b)
	}
	b, err := x.xchg(keyMsg, EncodeKey(my, withGID))
	if err != nil {
		return Dest{}, err
	}
	d, err := DecodeKey(b, withGID)
	if err != nil {
		return Dest{}, fail("Couldn't parse line <" + string(b) + ">\n")
	}
	return d, nil
}

// withLine appends a caller's line to a failure's text.
func withLine(err error, line string) error {
	if f, ok := err.(*Failure); ok {
		return &Failure{Stderr: f.Stderr + line, Code: f.Code}
	}
	return fail(err.Error() + "\n" + line)
}
