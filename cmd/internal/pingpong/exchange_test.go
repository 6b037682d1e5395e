package pingpong

import (
	"net"
	"strconv"
	"testing"
	"time"

	"github.com/rdmastack/rdmastack/ib"
)

func TestExchangeGID(t *testing.T) {
	g, err := ib.ParseGID("fe80::a8bb:ccff:fedd:eeff")
	if err != nil {
		t.Fatal(err)
	}
	// rdma-core's gid_to_wire_gid: big-endian words as %08x.
	if got, want := wireGID(g), "fe80000000000000a8bbccfffeddeeff"; got != want {
		t.Fatalf("wireGID = %s, want %s", got, want)
	}
	d := dest{lid: 0x12, qpn: 0x345, psn: 0xabcdef, gid: g}
	msg := d.encode()
	if len(msg) != msgLen || string(msg[:msgLen-1]) != "0012:000345:abcdef:fe80000000000000a8bbccfffeddeeff" || msg[msgLen-1] != 0 {
		t.Fatalf("encode = %q", msg)
	}
	if got := decode(msg); got != d {
		t.Fatalf("decode(encode(%+v)) = %+v", d, got)
	}
}

func FuzzDecode(f *testing.F) {
	f.Add([]byte("0012:000345:abcdef:fe80000000000000a8bbccfffeddeeff\x00"))
	f.Add([]byte("zz:"))
	f.Fuzz(func(t *testing.T, b []byte) {
		d := decode(b)
		if d2 := decode(d.encode()); d2 != d && d.lid <= 0xffff && d.qpn <= 0xffffff && d.psn <= 0xffffff {
			t.Fatalf("%+v re-decodes as %+v", d, d2)
		}
	})
}

// TestExchangeSRQ: srq_pingpong's exchange over loopback TCP, each side
// sending maxQP records (zero records past its QPs), the server
// connecting between its reads and its writes; a client gone mid-way is
// an error, not a wait for ever.
func TestExchangeSRQ(t *testing.T) {
	if got, want := string(dest{}.encode()), "0000:000000:000000:00000000000000000000000000000000\x00"; got != want {
		t.Fatalf("zero record %q, want %q", got, want)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	srv := []dest{{lid: 1, qpn: 0x11, psn: 0x111}, {lid: 1, qpn: 0x12, psn: 0x112}}
	cli := []dest{{lid: 2, qpn: 0x21, psn: 0x221}, {lid: 2, qpn: 0x22, psn: 0x222}}
	type res struct {
		rem []dest
		err error
	}
	sc := make(chan res, 1)
	connected := false
	go func() {
		rem, err := serverExchange(SRQ, port, srv, func(d []dest) error { connected = len(d) == maxQP; return nil })
		sc <- res{rem, err}
	}()
	var crem []dest
	for try := 0; ; try++ {
		if crem, err = clientExchange(SRQ, "127.0.0.1", port, cli); err == nil || try == 100 {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err != nil {
		t.Fatal(err)
	}
	s := <-sc
	if s.err != nil || !connected {
		t.Fatalf("server: %v (connected: %v)", s.err, connected)
	}
	if len(s.rem) != maxQP || len(crem) != maxQP || s.rem[1] != cli[1] || crem[1] != srv[1] || s.rem[2] != (dest{}) || crem[255] != (dest{}) {
		t.Fatalf("server got %d records (%+v), client %d (%+v)", len(s.rem), s.rem[:3], len(crem), crem[:3])
	}

	// A client that leaves after 10 records.
	go func() {
		_, err := serverExchange(SRQ, port, srv, func([]dest) error { return nil })
		sc <- res{nil, err}
	}()
	var conn net.Conn
	for try := 0; try < 100; try++ {
		if conn, err = net.Dial("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port))); err == nil {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err != nil {
		t.Fatal(err)
	}
	for range 10 {
		conn.Write(dest{}.encode())
	}
	conn.Write([]byte("0000:"))
	conn.Close()
	select {
	case s := <-sc:
		if s.err == nil || s.err.Error() != "5/52: Couldn't read remote address [10]" {
			t.Fatalf("server after a client left: %v", s.err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the server waits for a client that left")
	}
}
