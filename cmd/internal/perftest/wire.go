package perftest

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/rdmastack/rdmastack/ib"
)

// Dest is one QP's end as the key messages carry it (perftest's struct
// pingpong_dest).
type Dest struct {
	LID      uint16
	OutReads uint16
	QPN      uint32 // 24 bits (mask24)
	PSN      uint32 // 24 bits (mask24)
	RKey     uint32
	VAddr    uint64
	GID      ib.GID
	SRQN     uint32
}

// Key message sizes (perftest_communication.h's KEY_MSG_SIZE and
// KEY_MSG_SIZE_GID): the text and its NUL.
const (
	keyMsgSize    = 59
	keyMsgSizeGID = 108
)

// mask24 keeps the 24 bits of a QPN or PSN, all that IB's headers (and
// the key message's 6-digit fields) carry.
const mask24 = 1<<24 - 1

// ErrKeyMessage is matched by the error of a key message that does not
// parse.
var ErrKeyMessage = errors.New("malformed key message")

// appendKey writes d as perftest's key message: with a GID
// "%04x:%04x:%06x:%06x:%08x:%016llx:" then the 16 GID bytes "%02x:" and
// "%08x:" with the SRQ number; without one
// "%04x:%04x:%06x:%06x:%08x:%016llx:%08x". A NUL ends both. Every field
// is as wide as its value can be, so the message always has perftest's
// fixed size: the QPN and PSN, 24-bit numbers held in uint32s, are
// masked to their 24 bits (perftest's sprintf would write a wider value
// past the end of its fixed buffer).
func appendKey(b []byte, d *Dest, withGID bool) []byte {
	b = fmt.Appendf(b, "%04x:%04x:%06x:%06x:%08x:%016x:", d.LID, d.OutReads, d.QPN&mask24, d.PSN&mask24, d.RKey, d.VAddr)
	if !withGID {
		b = fmt.Appendf(b, "%08x", d.SRQN)
		return append(b, 0)
	}
	for _, x := range d.GID {
		b = fmt.Appendf(b, "%02x:", x)
	}
	b = fmt.Appendf(b, "%08x:", d.SRQN)
	return append(b, 0)
}

// EncodeKey is the key message for d: keyMsgSizeGID bytes with a GID,
// keyMsgSize without.
func EncodeKey(d *Dest, withGID bool) []byte {
	n := keyMsgSize
	if withGID {
		n = keyMsgSizeGID
	}
	return appendKey(make([]byte, 0, n), d, withGID)
}

// DecodeKey parses a key message as perftest reads it: colon-separated
// hexadecimal fields in a fixed order (the GID form has 24 of them). A
// field wider than its value keeps the low bits, as strtol into the
// field's C type does; the QPN and PSN keep their 24 bits, all that the
// QP's attributes carry on the wire, so what DecodeKey returns encodes
// back to the same Dest.
func DecodeKey(msg []byte, withGID bool) (Dest, error) {
	var d Dest
	want := keyMsgSize
	nf := 7
	if withGID {
		want, nf = keyMsgSizeGID, 23
	}
	if len(msg) != want {
		return d, fmt.Errorf("%w: %d bytes, want %d", ErrKeyMessage, len(msg), want)
	}
	s := string(msg)
	if i := strings.IndexByte(s, 0); i >= 0 {
		s = s[:i]
	}
	f := strings.Split(strings.TrimSuffix(s, ":"), ":")
	if len(f) != nf {
		return d, fmt.Errorf("%w: %d fields, want %d: %q", ErrKeyMessage, len(f), nf, s)
	}
	var v [23]uint64
	for i, x := range f {
		n, err := strconv.ParseUint(x, 16, 64)
		if err != nil || x == "" {
			return d, fmt.Errorf("%w: field %d %q", ErrKeyMessage, i, x)
		}
		v[i] = n
	}
	d.LID, d.OutReads, d.QPN, d.PSN, d.RKey, d.VAddr = uint16(v[0]), uint16(v[1]), uint32(v[2])&mask24, uint32(v[3])&mask24, uint32(v[4]), v[5]
	if !withGID {
		d.SRQN = uint32(v[6])
		return d, nil
	}
	for i := range d.GID {
		d.GID[i] = byte(v[6+i])
	}
	d.SRQN = uint32(v[22])
	return d, nil
}

// versionMsg is the 16-byte version exchange: the NUL-padded string.
func versionMsg(v string) []byte {
	b := make([]byte, 16)
	copy(b[:15], v)
	return b
}

// parseVersion is atof over the peer's version string.
func parseVersion(b []byte) float64 {
	s := string(b)
	if i := strings.IndexByte(s, 0); i >= 0 {
		s = s[:i]
	}
	s = strings.TrimSpace(s)
	end := 0
	for end < len(s) && (s[end] >= '0' && s[end] <= '9' || s[end] == '.' || end == 0 && (s[end] == '-' || s[end] == '+')) {
		end++
	}
	f, err := strconv.ParseFloat(s[:end], 64)
	if err != nil {
		return 0
	}
	return f
}

// mtuMsg is the MTU exchange: the ibv_mtu enum as one ASCII digit and a
// NUL.
func mtuMsg(m ib.MTU) []byte { return []byte{'0' + byte(m)%10, 0} }

// parseMTU is strtol(rem, NULL, 10) over the peer's MTU message.
func parseMTU(b []byte) int {
	n := 0
	for _, c := range b {
		if c < '0' || c > '9' {
			break
		}
		n = n*10 + int(c-'0')
	}
	return n
}

// Report is a bandwidth test's result as the report exchange carries it
// (struct bw_report_data, without the per-port fields).
type Report struct {
	Size       uint64
	Iters      uint64
	BWPeak     float64
	BWAvg      float64
	MsgRateAvg float64
}

// reportFields are the report exchange's messages, in order: size (8),
// iters (8 from a peer ≥ 5.33, else 4), then three doubles, each
// big-endian.
func reportFields(r *Report, longIters bool) [][]byte {
	be64 := func(v uint64) []byte { return binary.BigEndian.AppendUint64(nil, v) }
	it := be64(r.Iters)
	if !longIters {
		it = binary.BigEndian.AppendUint32(nil, uint32(r.Iters))
	}
	return [][]byte{be64(r.Size), it, be64(math.Float64bits(r.BWPeak)), be64(math.Float64bits(r.BWAvg)),
		be64(math.Float64bits(r.MsgRateAvg))}
}

// decodeReport is reportFields' inverse.
func decodeReport(f [][]byte) (Report, error) {
	if len(f) != 5 || len(f[0]) != 8 || (len(f[1]) != 8 && len(f[1]) != 4) || len(f[2]) != 8 || len(f[3]) != 8 || len(f[4]) != 8 {
		return Report{}, errors.New("malformed report")
	}
	r := Report{Size: binary.BigEndian.Uint64(f[0])}
	if len(f[1]) == 8 {
		r.Iters = binary.BigEndian.Uint64(f[1])
	} else {
		r.Iters = uint64(binary.BigEndian.Uint32(f[1]))
	}
	r.BWPeak = math.Float64frombits(binary.BigEndian.Uint64(f[2]))
	r.BWAvg = math.Float64frombits(binary.BigEndian.Uint64(f[3]))
	r.MsgRateAvg = math.Float64frombits(binary.BigEndian.Uint64(f[4]))
	return r, nil
}
