package rsocket

import (
	"encoding/binary"
	"errors"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/rdmastack/rdmastack/rdma/internal/rsproto"
	"github.com/rdmastack/rdmastack/uverbs"
	"github.com/rdmastack/rdmastack/uverbs/membuf"
)

// iomapConn is engineConn with a target buffer of n iomap entries.
func iomapConn(t *testing.T, n int) *conn {
	t.Helper()
	c := engineConn(t, 4, 1024)
	b, err := membuf.New(rsproto.SGLSize*rsproto.SGESize + n*rsproto.IOMapSize)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	c.res.tbuf, c.res.iomapSize = b, n
	return c
}

// putIOMap is the peer's RDMA write of entry i.
func putIOMap(c *conn, i int, e rsproto.IOMap) {
	e.Put(c.res.tbuf.Bytes()[rsproto.SGLSize*rsproto.SGESize+i*rsproto.IOMapSize:], binary.LittleEndian)
}

func TestIOMapEntries(t *testing.T) {
	c := iomapConn(t, 3)
	win := rsproto.IOMap{Offset: 4096, SGE: rsproto.SGE{Addr: 0x10000, Key: 9, Length: 100}}
	putIOMap(c, 2, win)
	c.complete(recvWC(rsproto.MakeMsg(rsproto.OpIOMapSGL, 2)))
	if c.flow.err != nil {
		t.Fatal(c.flow.err)
	}
	for _, o := range []uint64{4096, 4195} {
		if got, err := c.findIOMap(o); err != nil || got != win {
			t.Errorf("findIOMap(%d) = %+v, %v", o, got, err)
		}
	}
	for _, o := range []uint64{0, 4095, 4196} {
		if _, err := c.findIOMap(o); !errors.Is(err, ErrNotMapped) || !errors.Is(err, unix.EINVAL) {
			t.Errorf("findIOMap(%d): %v, want ErrNotMapped", o, err)
		}
	}
	if c.flow.err != nil || !c.flow.connected {
		t.Fatalf("an unmapped offset broke the connection: %v", c.flow.err)
	}
}

// TestIOMapPeerErrors: an IOMAP_SGL beyond this side's array, or an entry
// whose window wraps, closes the connection with an error matching
// rsproto.ErrMalformed and unix.EPROTO, as does WriteAt meeting such an
// entry written without a message.
func TestIOMapPeerErrors(t *testing.T) {
	wraps := rsproto.IOMap{Offset: 1<<64 - 8, SGE: rsproto.SGE{Addr: 0x1000, Key: 1, Length: 64}}
	for name, f := range map[string]func(c *conn){
		"index beyond the array": func(c *conn) { c.complete(recvWC(rsproto.MakeMsg(rsproto.OpIOMapSGL, 2))) },
		"index far beyond":       func(c *conn) { c.complete(recvWC(rsproto.MakeMsg(rsproto.OpIOMapSGL, rsproto.DataMask))) },
		"wrapping window": func(c *conn) {
			putIOMap(c, 1, wraps)
			c.complete(recvWC(rsproto.MakeMsg(rsproto.OpIOMapSGL, 1)))
		},
		"wrapping window found by WriteAt": func(c *conn) {
			putIOMap(c, 0, wraps)
			c.findIOMap(0)
		},
	} {
		c := iomapConn(t, 2)
		f(c)
		if !errors.Is(c.flow.err, rsproto.ErrMalformed) || !errors.Is(c.flow.err, unix.EPROTO) || c.flow.connected {
			t.Errorf("%s: err %v, connected %v", name, c.flow.err, c.flow.connected)
		}
	}
	c := engineConn(t, 4, 1024) // no iomap at all
	c.complete(recvWC(rsproto.MakeMsg(rsproto.OpIOMapSGL, 0)))
	if !errors.Is(c.flow.err, rsproto.ErrMalformed) {
		t.Errorf("IOMAP_SGL to a side without iomap: %v", c.flow.err)
	}
}

// TestIOMapSendCompletion: the announcement's completion gives back the
// send buffer bytes it took, as riowrite's RDMA WRITEs do theirs.
func TestIOMapSendCompletion(t *testing.T) {
	c := engineConn(t, 4, 1024)
	c.flow.sqeAvail, c.flow.sbufAvail = 10, 100
	c.complete(&uverbs.WC{ID: uint64(rsproto.MakeMsg(rsproto.OpWrite, rsproto.IOMapSize))})
	c.complete(&uverbs.WC{ID: uint64(rsproto.MakeMsg(rsproto.OpWrite, 2048))})
	if c.flow.sqeAvail != 12 || c.flow.sbufAvail != 100+24+2048 || c.flow.err != nil {
		t.Fatalf("sqe %d, sbuf %d, err %v", c.flow.sqeAvail, c.flow.sbufAvail, c.flow.err)
	}
}

// FuzzIOMapPeer: whatever the peer writes into the iomap array and
// whichever entries it names, the engine never panics, and an entry
// findIOMap returns covers the offset.
func FuzzIOMapPeer(f *testing.F) {
	good := make([]byte, 2*rsproto.IOMapSize)
	rsproto.IOMap{Offset: 10, SGE: rsproto.SGE{Addr: 0x1000, Length: 5}}.Put(good[rsproto.IOMapSize:], binary.LittleEndian)
	f.Add(good, uint32(1), uint64(12))
	f.Add(make([]byte, 3), uint32(7), uint64(0))
	f.Fuzz(func(t *testing.T, tbuf []byte, index uint32, off uint64) {
		c := iomapConn(t, 2)
		copy(c.res.tbuf.Bytes()[rsproto.SGLSize*rsproto.SGESize:], tbuf)
		c.complete(recvWC(rsproto.MakeMsg(rsproto.OpIOMapSGL, index)))
		if c.flow.err != nil && !errors.Is(c.flow.err, rsproto.ErrMalformed) {
			t.Fatalf("error %v does not match ErrMalformed", c.flow.err)
		}
		e, err := c.findIOMap(off)
		switch {
		case err == nil && !e.Covers(off):
			t.Fatalf("findIOMap(%d) = %+v", off, e)
		case err != nil && !errors.Is(err, ErrNotMapped) && !errors.Is(err, rsproto.ErrMalformed):
			t.Fatalf("findIOMap(%d): %v", off, err)
		}
	})
}
