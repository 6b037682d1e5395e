package rsocket

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/netip"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/rdmastack/rdmastack/internal/testkit/rxetest"
	"github.com/rdmastack/rdmastack/rdma/internal/rsproto"
)

// rsIOMapPair is an rsPair whose listener's connections take n windows
// of the peer and whose dialled end takes dn.
func rsIOMapPair(t *testing.T, n, dn int) (cli, srv *Conn) {
	t.Helper()
	addr, _ := rxetest.Addr(t)
	lc := ListenConfig{IOMapSize: n}
	l, err := lc.Listen(context.Background(), "rdma", netip.AddrPortFrom(addr, 0).String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return rsPair(t, l, &Dialer{IOMapSize: dn})
}

// readString reads exactly len(want) bytes from c and checks them.
func readString(t *testing.T, c *Conn, want string) {
	t.Helper()
	b := make([]byte, len(want))
	if _, err := io.ReadFull(c, b); err != nil || string(b) != want {
		t.Fatalf("read %q, %v; want %q", b, err, want)
	}
}

// TestIntegrationRSIOMap: the server maps a window, the client writes it
// with WriteAt and says so on the stream; the server finds the bytes in
// its window. Then the bounds: the offsets outside the window, a second
// window beyond the client's iomap size, and the slot that Close frees.
func TestIntegrationRSIOMap(t *testing.T) {
	_, dev := rxetest.Addr(t)
	checkNoLeaks(t, &dev)
	cli, srv := rsIOMapPair(t, 0, 1)

	m, err := srv.Map(100000, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	if m.Len() != 100000 || m.Offset() != 1<<20 || len(m.Bytes()) != 100000 {
		t.Fatalf("mapping of %d bytes at %d", m.Len(), m.Offset())
	}
	if _, err := srv.Map(10, 0); !errors.Is(err, unix.ENOMEM) {
		t.Fatalf("a second window of a one-entry iomap: %v", err)
	}
	if _, err := cli.Map(10, 0); !errors.Is(err, unix.ENOMEM) {
		t.Fatalf("a window for a peer without iomap: %v", err)
	}
	if _, err := srv.Write([]byte("go")); err != nil { // after the announcement
		t.Fatal(err)
	}
	readString(t, cli, "go")

	data := make([]byte, 100000)
	for i := range data {
		data[i] = byte(i*7 + i>>8)
	}
	if n, err := cli.WriteAt(data[:60000], 1<<20); n != 60000 || err != nil {
		t.Fatalf("WriteAt = %d, %v", n, err)
	}
	if n, err := cli.WriteAt(data[60000:], 1<<20+60000); n != 40000 || err != nil {
		t.Fatalf("WriteAt = %d, %v", n, err)
	}
	// Past the window's end: the bytes inside go, then ErrNotMapped.
	if n, err := cli.WriteAt(data[:20], 1<<20+100000-10); n != 10 || !errors.Is(err, ErrNotMapped) {
		t.Fatalf("WriteAt across the end = %d, %v", n, err)
	}
	for _, off := range []int64{0, 1<<20 - 1, 1<<20 + 100000} {
		if n, err := cli.WriteAt(data[:1], off); n != 0 || !errors.Is(err, ErrNotMapped) || !errors.Is(err, unix.EINVAL) {
			t.Fatalf("WriteAt(%d) = %d, %v", off, n, err)
		}
	}
	if _, err := cli.WriteAt(data[:1], -1); !errors.Is(err, unix.EINVAL) {
		t.Fatalf("WriteAt(-1): %v", err)
	}
	if _, err := cli.Write([]byte("done")); err != nil {
		t.Fatal(err)
	}
	readString(t, srv, "done")
	want := append(append([]byte(nil), data[:99990]...), data[:10]...)
	if !bytes.Equal(m.Bytes(), want) {
		t.Fatal("the window does not hold what the peer wrote")
	}

	// Close frees the slot for another window, which the peer finds.
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	if m.Bytes() != nil || m.Close() != nil {
		t.Fatal("a closed Mapping")
	}
	m2, err := srv.Map(64, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := srv.Write([]byte("again")); err != nil {
		t.Fatal(err)
	}
	readString(t, cli, "again")
	if n, err := cli.WriteAt([]byte("hello"), 59); n != 5 || err != nil {
		t.Fatalf("WriteAt in the new window = %d, %v", n, err)
	}
	if _, err := cli.Write([]byte("!")); err != nil {
		t.Fatal(err)
	}
	readString(t, srv, "!")
	if string(m2.Bytes()[59:]) != "hello" {
		t.Fatalf("new window %q", m2.Bytes()[59:])
	}
	// The Conn's Close closes its Mappings (checkNoLeaks sees the MRs).
	if err := errors.Join(cli.Close(), srv.Close()); err != nil {
		t.Fatal(err)
	}
	if m2.Bytes() != nil {
		t.Fatal("a Mapping of a closed Conn")
	}
	if _, err := srv.Map(1, 0); err == nil {
		t.Fatal("Map on a closed Conn")
	}
}

// TestIntegrationRSIOMapMalformed: a peer that announces a window that
// wraps around the offset space costs its connection: the reader of the
// entry fails with an error matching rsproto.ErrMalformed (and
// unix.EPROTO), without a panic, and its Close frees everything.
func TestIntegrationRSIOMapMalformed(t *testing.T) {
	_, dev := rxetest.Addr(t)
	checkNoLeaks(t, &dev)
	cli, srv := rsIOMapPair(t, 0, 1)
	srv.wmu.Lock()
	srv.mu.Lock()
	if err := srv.waitSend(); err != nil {
		t.Fatal(err)
	}
	srv.postIOMap(0, rsproto.IOMap{Offset: 1<<64 - 8, SGE: rsproto.SGE{Addr: 0x1000, Key: 1, Length: 64}})
	srv.mu.Unlock()
	srv.wmu.Unlock()
	_, err := cli.Read(make([]byte, 1))
	if !errors.Is(err, rsproto.ErrMalformed) || !errors.Is(err, unix.EPROTO) {
		t.Fatalf("Read after a malformed iomap entry: %v", err)
	}
	if _, err := cli.WriteAt([]byte{1}, 0); err == nil {
		t.Fatal("WriteAt on a broken connection")
	}
	if err := errors.Join(cli.Close(), srv.Close()); err != nil {
		t.Fatal(err)
	}
}
