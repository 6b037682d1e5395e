package rsocket

import (
	"bytes"
	"strconv"
	"testing"
	"time"
)

// TestIntegrationRSNoAllocs: a round trip of small messages through
// Write and Read, both ends in this process, allocates nothing on rxe:
// the message goes inline from the caller's bytes, the work requests
// stay on the stack, and a wake-up nobody sleeps on costs nothing.
func TestIntegrationRSNoAllocs(t *testing.T) {
	testNoAllocs(t, rxeSetup)
}

// TestIntegrationSIWRSNoAllocs is TestIntegrationRSNoAllocs on siw,
// whose messages are a WRITE and a SEND of the word (msgSend).
func TestIntegrationSIWRSNoAllocs(t *testing.T) {
	s, _, _ := siwSetup(t)
	testNoAllocs(t, s)
}

func testNoAllocs(t *testing.T, s rsSetup) {
	l := s.listen(t)
	cli, srv := s.pair(t, l, &Dialer{KeepAlive: -1})
	for _, c := range []*Conn{cli, srv} {
		if c.res.inline < 64 {
			t.Fatalf("inline size %d, want at least 64", c.res.inline)
		}
		// A Read that had to sleep would take a fresh wake-up channel
		// (an allocation per sleep, not per message): poll until the
		// data is there, however slow the emulated CPU is.
		c.pollTime = time.Minute
	}
	for _, size := range []int{1, 64} {
		out, in := bytes.Repeat([]byte{byte(size)}, size), make([]byte, size)
		roundTrip := func() {
			for _, p := range [][2]*Conn{{cli, srv}, {srv, cli}} {
				if n, err := p[0].Write(out); n != size || err != nil {
					t.Fatalf("write: %d, %v", n, err)
				}
				for got := 0; got < size; {
					n, err := p[1].Read(in[got:])
					if err != nil {
						t.Fatalf("read: %v", err)
					}
					got += n
				}
				if !bytes.Equal(in, out) {
					t.Fatalf("%d bytes: read %x", size, in)
				}
			}
		}
		for range 50 { // credits granted, queues and buffers warm
			roundTrip()
		}
		if a := testing.AllocsPerRun(200, roundTrip); a != 0 {
			t.Errorf("%d-byte messages: %v allocations per round trip (two Writes, two Reads)", size, a)
		}
	}
}

// BenchmarkConnPingPong: round trips of one small message each way
// between two Conns (ns/op is the round trip), with allocations.
func BenchmarkConnPingPong(b *testing.B) {
	for _, size := range []int{64, 4 << 10} {
		b.Run(strconv.Itoa(size), func(b *testing.B) {
			cli, srv := benchPair(b)
			done := make(chan error, 1)
			go func() {
				buf := make([]byte, size)
				for range b.N {
					if _, err := readFull(srv, buf); err != nil {
						done <- err
						return
					}
					if _, err := srv.Write(buf); err != nil {
						done <- err
						return
					}
				}
				done <- nil
			}()
			msg := make([]byte, size)
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				if _, err := cli.Write(msg); err != nil {
					b.Fatal(err)
				}
				if _, err := readFull(cli, msg); err != nil {
					b.Fatal(err)
				}
			}
			if err := <-done; err != nil {
				b.Fatal(err)
			}
		})
	}
}

// readFull is io.ReadFull on a *Conn, without the interface call that
// would make b escape.
func readFull(c *Conn, b []byte) (int, error) {
	got := 0
	for got < len(b) {
		n, err := c.Read(b[got:])
		got += n
		if err != nil {
			return got, err
		}
	}
	return got, nil
}
