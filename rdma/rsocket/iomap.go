package rsocket

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"runtime"

	"golang.org/x/sys/unix"

	"github.com/rdmastack/rdmastack/rdma/internal/rsproto"
	"github.com/rdmastack/rdmastack/uverbs"
	"github.com/rdmastack/rdmastack/uverbs/membuf"
)

// ErrNotMapped is matched by WriteAt's error when no window of the peer
// (a Mapping it made with Map) covers the offset written to. It matches
// unix.EINVAL.
var ErrNotMapped = fmt.Errorf("rdma: no window of the peer at that offset: %w", unix.EINVAL)

// rsIOMap is a Conn's iomap state (rsockets' remote_iomap and
// remote_iomappings), guarded by Conn.mu. This side's own target iomap
// array, which the peer fills, sits in the target buffer after the
// SGL: rsResources.iomapSize entries.
type rsIOMap struct {
	remote rsproto.SGE // the peer's target iomap array; Length is its entries
	slots  []*Mapping  // this side's windows by their index there; nil is free
	last   int         // the entry of ours WriteAt used last
}

// Mapping is a window of registered memory that the peer of a Conn may
// write into with its WriteAt (librdmacm's riowrite), made by Map
// (riomap with PROT_WRITE). The memory is outside Go's heap. The peer
// writes it at any time and says nothing: what it wrote is known once
// something it sent after, on the stream, is read (RC delivers in
// order), or by polling a byte the peer writes last.
type Mapping struct {
	c      *conn
	index  int
	offset int64
	buf    *membuf.Buffer
	mr     *membuf.MR
	done   bool // closed; guarded by c.mu
}

// Map makes a window of size bytes of new zeroed memory, registered for
// the peer to write into, and announces it at offset: the peer's
// WriteAt at offsets [offset, offset+size) lands in the Mapping's Bytes
// (riomap(buf, size, PROT_WRITE, 0, offset)). The announcement, an
// entry of the peer's iomap array, is sent at once, before any later
// Write; like Write it waits for a credit within the write deadline.
//
// The peer has room for as many windows as its iomap size (Dialer's or
// ListenConfig's IOMapSize there; rsockets' RDMA_IOMAPSIZE): beyond
// that, and with a peer that has none, Map fails with an error matching
// unix.ENOMEM, as riomap does. A bad size or offset matches
// unix.EINVAL.
func (c *Conn) Map(size int, offset int64) (*Mapping, error) {
	defer runtime.KeepAlive(c)
	if size <= 0 || offset < 0 || offset+int64(size) < offset || size > 1<<32-1 {
		return nil, c.opError("map", errInvalid)
	}
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if err := c.ready(c.wdl); err != nil {
		return nil, c.opError("map", err)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	mp, err := c.newMapping(size, offset)
	if err != nil {
		return nil, c.opError("map", err)
	}
	if err := c.waitSend(); err != nil {
		mp.closeLocked()
		return nil, c.opError("map", err)
	}
	c.postIOMap(mp.index, rsproto.IOMap{Offset: uint64(offset),
		SGE: rsproto.SGE{Addr: mp.buf.Addr(0), Key: mp.mr.RKey(), Length: uint32(size)}})
	return mp, nil
}

// newMapping takes a free slot of the peer's iomap array and registers
// memory for it (rs_get_iomap_mr, ibv_reg_mr); c.mu is held.
func (c *conn) newMapping(size int, offset int64) (*Mapping, error) {
	im := &c.iomap
	switch {
	case isClosed(c.closed): // Close frees the PD under c.mu
		return nil, net.ErrClosed
	case c.flow.err != nil:
		return nil, c.flow.err
	}
	if im.slots == nil {
		im.slots = make([]*Mapping, im.remote.Length)
	}
	index := -1
	for i, s := range im.slots {
		if s == nil {
			index = i
			break
		}
	}
	if index < 0 {
		return nil, fmt.Errorf("all %d iomap entries of the peer are in use: %w", len(im.slots), unix.ENOMEM)
	}
	buf, err := membuf.New(size)
	if err != nil {
		return nil, err
	}
	mr, err := buf.Register(c.res.pd, uverbs.AccessLocalWrite|uverbs.AccessRemoteWrite)
	if err != nil {
		return nil, errors.Join(err, buf.Close())
	}
	mp := &Mapping{c: c, index: index, offset: offset, buf: buf, mr: mr}
	im.slots[index] = mp
	return mp, nil
}

// postIOMap writes entry e into slot i of the peer's iomap array
// (rs_send_iomaps, rs_write_iomap): an RDMA WRITE (WITH IMM, postWriteMsg) of the entry
// in the peer's byte order, with IOMAP_SGL i as its message. It costs a
// credit and IOMapSize bytes of the send buffer, which its completion
// (a local OpWrite of that many bytes) gives back. canSend must hold.
func (c *conn) postIOMap(i int, e rsproto.IOMap) {
	f := &c.flow
	var b [rsproto.IOMapSize]byte
	e.Put(b[:], f.peerOrder)
	sges, nsge := c.stage(b[:])
	f.sseqNo++
	f.sqeAvail -= c.res.mode.wrs()
	f.sbufAvail -= rsproto.IOMapSize
	msg := rsproto.MakeMsg(rsproto.OpIOMapSGL, uint32(i))
	c.postWriteMsg(uint64(rsproto.MakeMsg(rsproto.OpWrite, rsproto.IOMapSize)), msg, sges[:nsge], nil, 0,
		c.iomap.remote.Addr+uint64(i)*rsproto.IOMapSize, c.iomap.remote.Key)
}

// Bytes is the window's memory, which the peer writes; nil once the
// Mapping or its Conn is closed. Slices of it must not be used after
// that.
func (m *Mapping) Bytes() []byte { return m.buf.Bytes() }

// Offset is where the window starts in the offsets the peer's WriteAt
// names.
func (m *Mapping) Offset() int64 { return m.offset }

// Len is the window's size.
func (m *Mapping) Len() int { return m.buf.Len() }

// Close takes the window back (riounmap): the memory is deregistered,
// so that a later write of the peer there fails (and breaks the
// connection, as rsockets' does: the peer is not told), and unmapped.
// Its slot of the peer's iomap array is free for another Map. Closing
// the Conn closes its Mappings. Safe to call more than once.
func (m *Mapping) Close() error {
	m.c.mu.Lock()
	defer m.c.mu.Unlock()
	if err := m.closeLocked(); err != nil {
		return m.c.opError("unmap", err)
	}
	return nil
}

func (m *Mapping) closeLocked() error {
	if m.done {
		return nil
	}
	m.done = true
	if s := m.c.iomap.slots; m.index < len(s) && s[m.index] == m {
		s[m.index] = nil
	}
	err := m.mr.Close()
	if err == nil {
		err = m.buf.Close()
	}
	return err
}

// closeMappings closes the Conn's Mappings; c.mu is held, and the
// memory regions must go before the PD.
func (c *conn) closeMappings() error {
	var errs []error
	for _, m := range c.iomap.slots {
		if m != nil {
			errs = append(errs, m.closeLocked())
		}
	}
	return errors.Join(errs...)
}

// WriteAt writes b into the peer's windows at offset off (riowrite): as
// RDMA WRITEs straight into the memory of the peer's Mappings that
// cover [off, off+len(b)), without a message. The peer learns of them
// only from what is sent after them (Write, which RC delivers after
// them). It waits for send buffer space and work requests as Write
// does, and returns when all of b is handed to the QP. Where no window
// of the peer covers the next offset it stops with an error matching
// ErrNotMapped, having written the bytes before. WriteAt and Write
// are serialized.
func (c *Conn) WriteAt(b []byte, off int64) (int, error) {
	defer runtime.KeepAlive(c)
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if err := c.ready(c.wdl); err != nil {
		return 0, c.opError("writeat", err)
	}
	if off < 0 || off+int64(len(b)) < off {
		return 0, c.opError("writeat", errInvalid)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	f := &c.flow
	olen := rsproto.SendLowWater // RS_OLAP_START_SIZE: 2048, doubling
	done := 0
	for done < len(b) {
		if err := c.waitSend(); err != nil {
			return done, c.opError("writeat", err)
		}
		o := uint64(off) + uint64(done)
		w, err := c.findIOMap(o)
		if err != nil {
			if c.flow.err != nil {
				c.broadcast() // the peer broke the connection: wake Read
			}
			return done, c.opError("writeat", err)
		}
		left := len(b) - done
		n := left
		if olen < left {
			n = olen
			olen = min(2*olen, rsproto.MaxTransfer)
		}
		n = int(min(uint64(n), uint64(f.sbufAvail), w.Offset+uint64(w.SGE.Length)-o))
		sges, nsge := c.stage(b[done : done+n])
		f.sqeAvail--
		f.sbufAvail -= n
		c.post(&uverbs.SendWR{ID: uint64(rsproto.MakeMsg(rsproto.OpWrite, uint32(n))), Opcode: uverbs.OpRDMAWrite,
			SGE: sges[:nsge], RemoteAddr: w.SGE.Addr + (o - w.Offset), RKey: w.SGE.Key})
		done += n
	}
	return done, nil
}

// findIOMap is the entry of this side's iomap array (which the peer
// writes) that covers offset o (rs_find_iomap); c.mu is held. A
// malformed entry breaks the connection.
func (c *conn) findIOMap(o uint64) (rsproto.IOMap, error) {
	n := c.res.iomapSize
	for k := range n {
		i := (c.iomap.last + k) % n
		e, err := c.ourIOMap(i)
		if err != nil {
			c.fail(err)
			return e, err
		}
		if e.Covers(o) {
			c.iomap.last = i
			return e, nil
		}
	}
	return rsproto.IOMap{}, ErrNotMapped
}

// ourIOMap reads entry i of this side's iomap array, as the peer wrote
// it, in this side's order (little-endian: no FlagNet).
func (c *conn) ourIOMap(i int) (rsproto.IOMap, error) {
	e, err := rsproto.DecodeIOMap(c.res.tbuf.Bytes()[rsproto.SGLSize*rsproto.SGESize+i*rsproto.IOMapSize:], binary.LittleEndian)
	if err != nil {
		return e, fmt.Errorf("iomap entry %d: %w", i, err)
	}
	return e, nil
}

// iomapWritten checks the entry an IOMAP_SGL message says the peer
// wrote: one beyond this side's array, or a malformed one, breaks the
// connection with an error matching rsproto.ErrMalformed (unix.EPROTO).
func (c *conn) iomapWritten(i uint32) {
	if uint64(i) >= uint64(c.res.iomapSize) {
		c.fail(fmt.Errorf("iomap entry %d of %d: %w", i, c.res.iomapSize, errProtocol))
		return
	}
	if _, err := c.ourIOMap(int(i)); err != nil {
		c.fail(err)
	}
}

var _ io.WriterAt = (*Conn)(nil)
