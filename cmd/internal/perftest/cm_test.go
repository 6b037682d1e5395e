package perftest

import (
	"bytes"
	"net/netip"
	"testing"

	"github.com/rdmastack/rdmastack/ib"
)

func TestKeyMessageCM(t *testing.T) {
	d := Dest{LID: 1, OutReads: 0x80, QPN: 0x11, PSN: 0xabcdef, RKey: 0x1234, VAddr: 0x55937de6f000,
		GID: ib.GID(netip.MustParseAddr("::ffff:10.77.0.1").As16()), SRQN: 9}
	b := encodeKeyCM(&d, 1)
	want := []byte{0, 0, 0, 1, 0, 0, 0, 0x80, 0, 0, 0, 0x11, 0, 0xab, 0xcd, 0xef, 0, 0, 0x12, 0x34, 0, 0, 0, 0,
		0, 0, 0x55, 0x93, 0x7d, 0xe6, 0xf0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 10, 77, 0, 1, 0, 0, 0, 9, 0, 0, 0, 1}
	if !bytes.Equal(b, want) {
		t.Fatalf("got  %x\nwant %x", b, want)
	}
	got, err := decodeKeyCM(b)
	d.SRQN = 0 // rdma_read_keys leaves it
	if err != nil || got != d {
		t.Errorf("decode %+v %v", got, err)
	}
	if _, err := decodeKeyCM(b[:55]); err == nil {
		t.Error("short message decoded")
	}
}
