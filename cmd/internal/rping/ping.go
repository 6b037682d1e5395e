package rping

import (
	"bytes"
	"encoding/binary"
	"fmt"
)

// infoSize is struct rping_rdma_info: be64 buf, be32 rkey, be32 size.
const infoSize = 16

// info is one rping_rdma_info message: a buffer the peer may read or
// write.
type info struct {
	addr uint64
	rkey uint32
	size uint32
}

func (m info) put(b []byte) {
	binary.BigEndian.PutUint64(b[0:], m.addr)
	binary.BigEndian.PutUint32(b[8:], m.rkey)
	binary.BigEndian.PutUint32(b[12:], m.size)
}

func parseInfo(b []byte) info {
	return info{addr: binary.BigEndian.Uint64(b[0:]), rkey: binary.BigEndian.Uint32(b[8:]), size: binary.BigEndian.Uint32(b[12:])}
}

// fill writes ping number ping into buf as rping's client does:
// "rdma-ping-<ping>: " (cut as snprintf cuts it), then ASCII from start
// upwards, 'A' after 'z', and a NUL in the last byte. It returns the
// next ping's start character.
func fill(buf []byte, ping int, start byte) byte {
	size := len(buf)
	head := fmt.Sprintf("rdma-ping-%d: ", ping)
	n := copy(buf[:size-1], head)
	buf[n] = 0
	c := start
	for i := len(head); i < size; i++ {
		buf[i] = c
		if c++; c > 'z' {
			c = 'A'
		}
	}
	buf[size-1] = 0
	if start++; start > 'z' {
		start = 'A'
	}
	return start
}

// cstring is buf up to its first NUL, as %s prints it.
func cstring(buf []byte) []byte {
	if i := bytes.IndexByte(buf, 0); i >= 0 {
		return buf[:i]
	}
	return buf
}
