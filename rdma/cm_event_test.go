package rdma

import (
	"errors"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/rdmastack/rdmastack/internal/kabi"
	"github.com/rdmastack/rdmastack/rdma/internal/ucma"
)

func TestEventTypeString(t *testing.T) {
	for typ, want := range map[EventType]string{
		EventAddrResolved: "RDMA_CM_EVENT_ADDR_RESOLVED", EventEstablished: "RDMA_CM_EVENT_ESTABLISHED",
		EventTimewaitExit: "RDMA_CM_EVENT_TIMEWAIT_EXIT", 99: "EventType(99)",
	} {
		if typ.String() != want {
			t.Errorf("%d: %q, want %q", uint32(typ), typ.String(), want)
		}
	}
}

func TestDecodeEventStatus(t *testing.T) {
	neg := func(e unix.Errno) uint32 { return uint32(-int32(e)) }
	r := &ucma.EventResp{UID: 7, ID: 3, Event: ucma.RDMA_CM_EVENT_REJECTED, Status: 8}
	if e := decodeEvent(r, false); e.status != RejectInvalidServiceID || !errors.Is(e.status, unix.ECONNREFUSED) || e.uid != 7 || e.handle != 3 {
		t.Errorf("REJECTED 8: %+v", e)
	}
	// iWARP: iw_cm passes the provider's errno (siw: -ECONNRESET for an
	// MPA reject); a reject all the same.
	r = &ucma.EventResp{Event: ucma.RDMA_CM_EVENT_REJECTED, Status: neg(unix.ECONNRESET)}
	if e := decodeEvent(r, false); e.status != RejectErrno(unix.ECONNRESET) || !errors.Is(e.status, unix.ECONNREFUSED) ||
		!errors.Is(e.status, unix.ECONNRESET) || errors.Is(e.status, unix.ETIMEDOUT) {
		t.Errorf("REJECTED -ECONNRESET: %v", e.status)
	}
	r = &ucma.EventResp{Event: ucma.RDMA_CM_EVENT_UNREACHABLE, Status: neg(unix.ETIMEDOUT)}
	if e := decodeEvent(r, false); !errors.Is(e.status, unix.ETIMEDOUT) {
		t.Errorf("UNREACHABLE -ETIMEDOUT: %v", e.status)
	}
	r = &ucma.EventResp{Event: ucma.RDMA_CM_EVENT_UNREACHABLE, Status: 2}
	if e := decodeEvent(r, true); e.status != SIDRStatus(2) {
		t.Errorf("SIDR UNREACHABLE 2: %v", e.status)
	}
	if RejectConsumerDefined.String() != "consumer defined (28)" || RejectReason(34).String() != "reason 34" {
		t.Errorf("reject strings %q %q", RejectConsumerDefined, RejectReason(34))
	}
}

func TestDecodeEventParam(t *testing.T) {
	var r ucma.EventResp
	c := ucma.ConnParam{QPNum: 0x123, PrivateDataLen: 56, InitiatorDepth: 1, ResponderResources: 2, RNRRetryCount: 7}
	copy(c.PrivateData[:], "hello")
	copy(r.Param[:], kabi.Bytes(&c))
	r.Event = ucma.RDMA_CM_EVENT_CONNECT_REQUEST
	e := decodeEvent(&r, false)
	if len(e.data) != 56 || string(e.data[:5]) != "hello" || e.peer.QPNum != 0x123 || e.peer.InitiatorDepth != 1 ||
		e.peer.ResponderResources != 2 || e.peer.RNRRetryCount != 7 {
		t.Errorf("conn param: %+v %q", e.peer, e.data)
	}
	u := ucma.UDParam{QPNum: 9, QKey: ucma.RDMA_UDP_QKEY, PrivateDataLen: 3}
	u.AhAttr.IsGlobal, u.AhAttr.DGID[15], u.AhAttr.PortNum = 1, 5, 1
	copy(u.PrivateData[:], "abc")
	r = ucma.EventResp{Event: ucma.RDMA_CM_EVENT_ESTABLISHED}
	copy(r.Param[:], kabi.Bytes(&u))
	e = decodeEvent(&r, true)
	if e.peer.QPNum != 9 || e.peer.QKey != ucma.RDMA_UDP_QKEY || !e.peer.AH.IsGlobal || e.peer.AH.DGID[15] != 5 ||
		e.peer.AH.Port != 1 || string(e.data) != "abc" {
		t.Errorf("ud param: %+v %q", e.peer, e.data)
	}
}

// FuzzDecodeEvent: any GET_EVENT response decodes without a panic, with
// at most the slot's private data, copied.
func FuzzDecodeEvent(f *testing.F) {
	var r ucma.EventResp
	f.Add(kabi.Bytes(&r), false)
	r.Event, r.Status, r.Param[264] = ucma.RDMA_CM_EVENT_REJECTED, 28, 148
	f.Add(kabi.Bytes(&r), false)
	r.Param[276] = 255
	f.Add(kabi.Bytes(&r), true)
	f.Fuzz(func(t *testing.T, b []byte, ud bool) {
		r := kabi.Decode[ucma.EventResp](b)
		e := decodeEvent(&r, ud)
		if len(e.data) > ucma.MaxPrivateData {
			t.Fatalf("%d bytes of private data", len(e.data))
		}
		if len(e.data) > 0 {
			e.data[0] ^= 0xff
			if r.Param[8] == e.data[0] && !ud {
				t.Fatal("the private data is not a copy")
			}
		}
		if int32(r.Status) != 0 && e.status == nil {
			t.Fatalf("status %d decoded as nil", int32(r.Status))
		}
		_ = e.typ.String()
		if e.status != nil {
			_ = e.status.Error()
		}
	})
}
