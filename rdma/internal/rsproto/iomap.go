package rsproto

import (
	"encoding/binary"
	"fmt"
)

// IOMapSize is the size of struct rs_iomap, one entry of the target
// iomap array.
const IOMapSize = 24

// MaxIOMapEntries is the largest iomap array connection data can
// announce: 0x7F scaled (rs_scale_to_value(0xFF, 8)).
const MaxIOMapEntries = 0x7F << 8

// IOMap is struct rs_iomap: a window of the writer's memory that the
// reader of the entry may RDMA-write into. Offset is the window's
// start in the offset space riowrite names; SGE is the memory (address,
// rkey, length) it maps to.
type IOMap struct {
	Offset uint64
	SGE    SGE
}

// Put writes the entry at the start of b in order o, and panics only if
// b is shorter than IOMapSize (a programming error, never peer input).
func (m IOMap) Put(b []byte, o binary.ByteOrder) {
	_ = b[IOMapSize-1]
	o.PutUint64(b[0:], m.Offset)
	m.SGE.Put(b[8:], o)
}

// DecodeIOMap reads an entry from the start of b in order o. An entry
// whose window wraps around the offset space or the address space is
// malformed; an entry of length 0 is an unused slot.
func DecodeIOMap(b []byte, o binary.ByteOrder) (IOMap, error) {
	if len(b) < IOMapSize {
		return IOMap{}, fmt.Errorf("rs_iomap of %d bytes, want %d: %w", len(b), IOMapSize, ErrMalformed)
	}
	m := IOMap{Offset: o.Uint64(b[0:])}
	m.SGE, _ = DecodeSGE(b[8:], o)
	n := uint64(m.SGE.Length)
	if m.Offset+n < m.Offset || m.SGE.Addr+n < m.SGE.Addr {
		return m, fmt.Errorf("rs_iomap window [%#x, +%d) at %#x wraps: %w", m.Offset, n, m.SGE.Addr, ErrMalformed)
	}
	return m, nil
}

// Covers reports whether offset off falls in the entry's window.
func (m IOMap) Covers(off uint64) bool {
	return off >= m.Offset && off-m.Offset < uint64(m.SGE.Length)
}

// ValueToScale is rs_value_to_scale(n, 8) cut to the byte that
// rs_conn_data.target_iomap_size holds: n itself up to 128, above that
// 0x80 with n's bits 8 and up.
func ValueToScale(n int) uint8 {
	if n <= 1<<7 {
		return uint8(n)
	}
	return uint8(1<<7 | n>>8)
}

// ScaleToValue is rs_scale_to_value(v, 8): the entry count a scaled
// byte stands for.
func ScaleToValue(v uint8) int {
	if v <= 1<<7 {
		return int(v)
	}
	return int(v&0x7F) << 8
}

// IOMapEntries is the iomap array size rsockets keep for a requested n
// (setsockopt RDMA_IOMAPSIZE rounds it through the scale): n up to 128,
// then whole multiples of 256 (n rounded down), at most
// MaxIOMapEntries (where rsocket.c's byte cast wraps above 32767, this
// saturates). n <= 0 is none.
func IOMapEntries(n int) int {
	switch {
	case n <= 0:
		return 0
	case n >= MaxIOMapEntries:
		return MaxIOMapEntries
	}
	return ScaleToValue(ValueToScale(n))
}

// IOMapEntries is how many iomap entries the sender of c lets its peer
// write (0 without FlagIOMap).
func (c *ConnData) IOMapEntries() int {
	if c.Flags&FlagIOMap == 0 {
		return 0
	}
	return ScaleToValue(c.IOMapSize)
}

// RemoteIOMap is where the sender of c keeps its target iomap array
// (rs_save_conn_data's remote_iomap): right after its target SGL array,
// under the same key, with IOMapEntries entries.
func (c *ConnData) RemoteIOMap() SGE {
	return SGE{Addr: c.TargetSGL.Addr + SGESize*uint64(c.TargetSGL.Length), Key: c.TargetSGL.Key,
		Length: uint32(c.IOMapEntries())}
}
