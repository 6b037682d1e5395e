package rsproto

import (
	"encoding/binary"
	"fmt"

	"golang.org/x/sys/unix"
)

// Version is the rsocket protocol version this package speaks
// (rs_conn_data.version).
const Version = 1

// Defaults of librdmacm's rsocket.c (def_* and RS_* there).
const (
	DefaultQPSize  = 384     // def_sqsize, def_rqsize: work requests each way
	DefaultBufSize = 1 << 17 // def_mem, def_wmem: receive and send buffer bytes
	DefaultInline  = 64      // def_inline
	SGLSize        = 2       // RS_SGL_SIZE: entries of the target SGL array
	QPCtrlSize     = 4       // RS_QP_CTRL_SIZE: control messages in flight
	SendLowWater   = 2048    // RS_SNDLOWAT: send buffer bytes needed to start a write
	MaxTransfer    = 65536   // RS_MAX_TRANSFER: bytes of one data write
	QPMinSize      = 16      // RS_QP_MIN_SIZE
	QPMaxSize      = 0xFFFE  // RS_QP_MAX_SIZE
)

// Conn flags (RS_CONN_FLAG_*).
const (
	FlagNet   = 1 << 0 // RS_CONN_FLAG_NET: the sender writes its SGEs big-endian
	FlagIOMap = 1 << 1 // RS_CONN_FLAG_IOMAP: the sender has an iomap array after its SGL
)

// SGESize is the size of struct rs_sge.
const SGESize = 16

// ConnDataSize is the size of struct rs_conn_data.
const ConnDataSize = 40

// SGE is struct rs_sge: a remote buffer (address, rkey, length).
type SGE struct {
	Addr   uint64
	Key    uint32
	Length uint32
}

// Put writes the entry at the start of b in order o (the byte order the
// peer's FlagNet asks for), and panics only if b is shorter than SGESize
// (a programming error, never peer input).
func (s SGE) Put(b []byte, o binary.ByteOrder) {
	_ = b[SGESize-1]
	o.PutUint64(b[0:], s.Addr)
	o.PutUint32(b[8:], s.Key)
	o.PutUint32(b[12:], s.Length)
}

// DecodeSGE reads an entry from the start of b in order o.
func DecodeSGE(b []byte, o binary.ByteOrder) (SGE, error) {
	if len(b) < SGESize {
		return SGE{}, fmt.Errorf("rs_sge of %d bytes, want %d: %w", len(b), SGESize, ErrMalformed)
	}
	return SGE{Addr: o.Uint64(b[0:]), Key: o.Uint32(b[8:]), Length: o.Uint32(b[12:])}, nil
}

// ConnData is struct rs_conn_data, the REQ and REP private data. Its
// numbers are big-endian on the wire whatever the hosts.
type ConnData struct {
	Version   uint8
	Flags     uint8
	Credits   uint16 // the sender's receive queue size: messages it can take
	PathMTU   uint8  // reserved[0]; ours: the sender's port's active MTU (enum ib_mtu), 0 from rdma-core, which zeroes it
	IOMapSize uint8  // target_iomap_size, scaled (rs_value_to_scale)
	TargetSGL SGE    // where to write credit updates: SGLSize entries
	DataBuf   SGE    // the first half of the sender's receive buffer
}

// ErrMalformed is matched by the errors of bytes that are not a valid
// rsocket message. It matches unix.EPROTO, which callers outside this
// internal package test for.
var ErrMalformed = fmt.Errorf("malformed rsocket data: %w", unix.EPROTO)

// Marshal is the 40 bytes of c.
func (c *ConnData) Marshal() []byte {
	b := make([]byte, ConnDataSize)
	b[0], b[1] = c.Version, c.Flags
	binary.BigEndian.PutUint16(b[2:], c.Credits)
	b[4] = c.PathMTU // b[5:7] reserved
	b[7] = c.IOMapSize
	c.TargetSGL.Put(b[8:], binary.BigEndian)
	c.DataBuf.Put(b[24:], binary.BigEndian)
	return b
}

// UnmarshalConnData decodes the start of b (private data is zero-padded
// by the kernel, so longer is fine). It checks the version and that the
// peer grants a buffer and an SGL array to write credits into.
func UnmarshalConnData(b []byte) (ConnData, error) {
	if len(b) < ConnDataSize {
		return ConnData{}, fmt.Errorf("rs_conn_data of %d bytes, want %d: %w", len(b), ConnDataSize, ErrMalformed)
	}
	c := ConnData{Version: b[0], Flags: b[1], Credits: binary.BigEndian.Uint16(b[2:]), PathMTU: b[4], IOMapSize: b[7]}
	c.TargetSGL, _ = DecodeSGE(b[8:], binary.BigEndian)
	c.DataBuf, _ = DecodeSGE(b[24:], binary.BigEndian)
	switch {
	case c.Version != Version:
		return c, fmt.Errorf("rsocket version %d, want %d: %w", c.Version, Version, ErrMalformed)
	case c.Credits == 0:
		return c, fmt.Errorf("rsocket peer grants no credits: %w", ErrMalformed)
	case c.TargetSGL.Length == 0:
		return c, fmt.Errorf("rsocket peer has an empty target SGL: %w", ErrMalformed)
	case c.DataBuf.Length == 0:
		return c, fmt.Errorf("rsocket peer grants an empty buffer: %w", ErrMalformed)
	}
	return c, nil
}

// SGEOrder is the byte order a peer with these flags wants its SGEs in.
func (c *ConnData) SGEOrder() binary.ByteOrder {
	if c.Flags&FlagNet != 0 {
		return binary.BigEndian
	}
	return binary.LittleEndian
}
