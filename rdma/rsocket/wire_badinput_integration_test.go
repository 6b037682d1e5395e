package rsocket

import (
	"bytes"
	"context"
	"encoding/binary"
	"io"
	"math/rand/v2"
	"net"
	"net/netip"
	"testing"
	"time"

	"github.com/rdmastack/rdmastack/ib"
	"github.com/rdmastack/rdmastack/internal/testkit/rxetest"
	"github.com/rdmastack/rdmastack/nldev"
)

// roceV2Port is RoCE v2's UDP port, where rxe takes its packets.
const roceV2Port = 4791

// handshake is the listener's handshake timeout in TestWireBadInput: a
// garbage REQ must be REJECTED before it. A one-vCPU guest still working
// through the flood can drop the first REQ's MAD, which the CM sends
// again some 4 s later (seen on 6.12: rejected after 5.0 s), so the bound
// is far above that.
const handshake = 20 * time.Second

// TestWireBadInput: a peer on the wire that sends garbage changes nothing
// on our side beyond a drop or a typed reject. Side 1 floods side 0's
// RoCE port with datagrams that are no valid packet (random bytes, and
// base transport headers of random opcodes and QP numbers with a wrong
// ICRC), then sends connection requests whose rsocket connection data
// does not parse (each must be REJECTED, with ECONNREFUSED, within the
// handshake timeout), then dials properly and echoes. Side 0's listener
// accepts that one connection only, its port stays ACTIVE, and once the
// good connection is closed its device holds nothing more than before
// (checkNoLeaks).
func TestWireBadInput(t *testing.T) {
	w, dev := rxetest.Wire(t)
	checkNoLeaks(t, &dev)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	msg := []byte("still here after the garbage")
	if w.Side == 0 {
		nl, err := nldev.Dial()
		if err != nil {
			t.Fatal(err)
		}
		defer nl.Close()
		lc := ListenConfig{HandshakeTimeout: handshake}
		l, err := lc.Listen(ctx, "rdma", netip.AddrPortFrom(w.Self, 0).String())
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		wireAnnounce(t, w, l)
		c, err := l.AcceptConn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		c.SetDeadline(time.Now().Add(time.Minute))
		if _, err := io.Copy(c, c); err != nil {
			t.Fatalf("echo: %v", err)
		}
		if err := c.Close(); err != nil {
			t.Fatal(err)
		}
		// Nothing else was accepted: the next Accept waits until its
		// deadline.
		l.SetDeadline(time.Now().Add(200 * time.Millisecond))
		if extra, err := l.Accept(); err == nil {
			extra.Close()
			t.Fatalf("a second connection was accepted from %v", extra.RemoteAddr())
		}
		w.Sync(t, t.Name()+"/done")
		if err := l.Close(); err != nil {
			t.Fatal(err)
		}
		ports, err := nl.Ports(dev)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range ports {
			if p.State != ib.PortActive {
				t.Fatalf("port %d after the garbage: %v", p.Index, p.State)
			}
		}
		return
	}

	dst := wirePeer(t, w)
	flood(t, netip.AddrPortFrom(w.Peer, roceV2Port), 1000)
	for i := range 8 {
		if _, _, err := stalled(ctx, stallGarbage, i, dst, handshake); err != nil {
			t.Fatalf("request %d with garbage connection data: %v", i, err)
		}
	}
	c, err := DialContext(ctx, "rdma", dst.String())
	if err != nil {
		t.Fatalf("dial after the garbage: %v", err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(time.Minute))
	if _, err := c.Write(msg); err != nil {
		t.Fatal(err)
	}
	if err := c.CloseWrite(); err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(c)
	if err != nil || !bytes.Equal(got, msg) {
		t.Fatalf("echo after the garbage: %q, %v", got, err)
	}
	w.Sync(t, t.Name()+"/done")
}

// flood sends n datagrams to dst that are no valid RoCE v2 packet: half
// random bytes of random length, half a base transport header (opcode,
// flags, P_Key, QP number, PSN: random) with random payload and a
// random, so wrong, ICRC.
func flood(t *testing.T, dst netip.AddrPort, n int) {
	t.Helper()
	c, err := net.DialUDP("udp", nil, net.UDPAddrFromAddrPort(dst))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	r := rand.New(rand.NewPCG(1, 2))
	b := make([]byte, 1500)
	for i := range n {
		size := 1 + r.IntN(1400)
		for j := range b[:size] {
			b[j] = byte(r.Uint32())
		}
		if i%2 == 1 && size >= 16 {
			b[0] = byte(r.IntN(256))                               // opcode
			b[1] = 0x40                                            // migration state, no pad, version 0
			binary.BigEndian.PutUint16(b[2:], 0xffff)              // the default P_Key
			binary.BigEndian.PutUint32(b[4:], r.Uint32()&0xffffff) // destination QP
			binary.BigEndian.PutUint32(b[8:], r.Uint32()&0xffffff) // PSN
		}
		if _, err := c.Write(b[:size]); err != nil {
			t.Fatalf("datagram %d: %v", i, err)
		}
		if i%50 == 49 {
			time.Sleep(time.Millisecond) // the wire is a host UDP socket: do not overrun it
		}
	}
}
