package rcopy

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// Command is a message's command (rcopy.c's anonymous enum CMD_*); a
// response carries its request's command with CmdResp set.
type Command uint8

const (
	CmdNoop  Command = 0    // CMD_NOOP
	CmdOpen  Command = 1    // CMD_OPEN: create and truncate the path that follows, mode in Data
	CmdClose Command = 2    // CMD_CLOSE: close the open file
	CmdWrite Command = 3    // CMD_WRITE: a u64 size, then that many bytes of the file
	CmdResp  Command = 0x80 // CMD_RESP: the response bit; Data is the request's status (0 or an errno)
)

func (c Command) String() string {
	var s string
	switch c &^ CmdResp {
	case CmdNoop:
		s = "noop"
	case CmdOpen:
		s = "open"
	case CmdClose:
		s = "close"
	case CmdWrite:
		s = "write"
	default:
		s = fmt.Sprintf("command(%d)", uint8(c&^CmdResp))
	}
	if c&CmdResp != 0 {
		s += " response"
	}
	return s
}

// HeaderSize is sizeof(struct msg_hdr); a write request (struct
// msg_write) is a header and its u64 size.
const (
	HeaderSize = 16
	WriteSize  = HeaderSize + 8
)

// Header is rcopy.c's struct msg_hdr, the start of every message, in
// the sender's byte order (rcopy.c: "TODO: handle byte swapping"; the
// programs agree on little-endian hosts):
//
//	u8 version (0), u8 command, u16 len (the whole message), u32 data, u64 id
type Header struct {
	Version uint8
	Command Command
	Len     uint16
	Data    uint32 // open: the source's st_mode; response: the status
	ID      uint64 // rcopy's client sends 0; the response echoes it
}

// order is the byte order of the hosts the programs run on.
var order = binary.NativeEndian

// Append appends the header's 16 bytes to b.
func (h Header) Append(b []byte) []byte {
	b = append(b, h.Version, byte(h.Command))
	b = order.AppendUint16(b, h.Len)
	b = order.AppendUint32(b, h.Data)
	return order.AppendUint64(b, h.ID)
}

// ErrShort is a message shorter than its fixed part.
var ErrShort = errors.New("short rcopy message")

// HeaderError is a header msg_recv_hdr refuses: a version other than 0,
// or a length below the header's own.
type HeaderError struct {
	Version uint8
	Len     uint16
}

func (e *HeaderError) Error() string {
	return fmt.Sprintf("invalid version %d or length %d", e.Version, e.Len)
}

// DecodeHeader decodes and checks a header as msg_recv_hdr does.
func DecodeHeader(b []byte) (Header, error) {
	if len(b) < HeaderSize {
		return Header{}, fmt.Errorf("decode rcopy header: %d bytes: %w", len(b), ErrShort)
	}
	h := Header{
		Version: b[0],
		Command: Command(b[1]),
		Len:     order.Uint16(b[2:]),
		Data:    order.Uint32(b[4:]),
		ID:      order.Uint64(b[8:]),
	}
	if h.Version != 0 || h.Len < HeaderSize {
		return h, &HeaderError{Version: h.Version, Len: h.Len}
	}
	return h, nil
}

// ResponseError is a response msg_get_resp refuses: not a bare header,
// or not the response to the request.
type ResponseError struct {
	Len     uint16
	Command Command
	Want    Command
}

func (e *ResponseError) Error() string {
	return fmt.Sprintf("invalid length %d or bad command response %x:%x", e.Len, uint8(e.Command), uint8(e.Want))
}

// CheckResponse checks that h answers a request of cmd, as
// msg_get_resp does, and returns the request's status.
func CheckResponse(h Header, cmd Command) (uint32, error) {
	if h.Len != HeaderSize || h.Command != cmd|CmdResp {
		return 0, &ResponseError{Len: h.Len, Command: h.Command, Want: cmd | CmdResp}
	}
	return h.Data, nil
}

// OpenMessage is a CMD_OPEN request as rcopy's client_open builds it:
// the header, then path NUL-padded to the next multiple of 8 (at least
// one NUL), its length cut to 16 bits as the C's u16 len is.
func OpenMessage(path string, mode uint32) []byte {
	n := (uint32(len(path)) + 8) &^ 7
	total := uint16(HeaderSize + n)
	b := Header{Command: CmdOpen, Len: total, Data: mode}.Append(make([]byte, 0, HeaderSize+n))
	b = append(b, path...)
	b = append(b, make([]byte, int(n)-len(path))...)
	return b[:total]
}

// Path is the path of an open request's body: the bytes before the
// first NUL.
func Path(body []byte) string {
	for i, c := range body {
		if c == 0 {
			return string(body[:i])
		}
	}
	return string(body)
}

// WriteMessage is a CMD_WRITE request (struct msg_write) for size
// bytes.
func WriteMessage(size uint64) []byte {
	b := Header{Command: CmdWrite, Len: WriteSize}.Append(make([]byte, 0, WriteSize))
	return order.AppendUint64(b, size)
}

// Response is the response to h with status.
func Response(h Header, status uint32) []byte {
	return Header{Command: h.Command | CmdResp, Len: HeaderSize, Data: status, ID: h.ID}.Append(make([]byte, 0, HeaderSize))
}
