package uevent

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// msg builds a message as kobject_uevent_env sends it: the header, then
// each variable, every one NUL-terminated.
func msg(parts ...string) []byte { return []byte(strings.Join(parts, "\x00") + "\x00") }

// The shapes below are those the 6.1 and 6.12 kernels send for rxe
// (rdma link add / delete) and for a rename (rdma dev set name).
func TestParse(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   []byte
		want Event
	}{
		{"uverbs add", msg("add@/devices/virtual/net/rv0/infiniband/rxe0/infiniband_verbs/uverbs0",
			"ACTION=add", "DEVPATH=/devices/virtual/net/rv0/infiniband/rxe0/infiniband_verbs/uverbs0",
			"SUBSYSTEM=infiniband_verbs", "MAJOR=231", "MINOR=192", "DEVNAME=infiniband/uverbs0", "SEQNUM=2215"),
			Event{Action: "add", DevPath: "/devices/virtual/net/rv0/infiniband/rxe0/infiniband_verbs/uverbs0",
				Subsystem: "infiniband_verbs", DevName: "infiniband/uverbs0", Seqnum: 2215}},
		{"device remove", msg("remove@/devices/virtual/net/rv0/infiniband/rxe0", "ACTION=remove",
			"DEVPATH=/devices/virtual/net/rv0/infiniband/rxe0", "SUBSYSTEM=infiniband", "NAME=rxe0", "SEQNUM=2230"),
			Event{Action: "remove", DevPath: "/devices/virtual/net/rv0/infiniband/rxe0", Subsystem: "infiniband", Seqnum: 2230}},
		{"rename", msg("move@/devices/virtual/net/rv0/infiniband/new0", "ACTION=move",
			"DEVPATH=/devices/virtual/net/rv0/infiniband/new0", "SUBSYSTEM=infiniband", "DEVPATH_OLD=/devices/virtual/net/rv0/infiniband/rxe0", "SEQNUM=9"),
			Event{Action: "move", DevPath: "/devices/virtual/net/rv0/infiniband/new0", Subsystem: "infiniband", Seqnum: 9}},
		{"header only", []byte("change@/devices/x\x00"), Event{Action: "change", DevPath: "/devices/x"}},
		{"trailing padding", append(msg("add@/d", "SUBSYSTEM=net"), 0, 0), Event{Action: "add", DevPath: "/d", Subsystem: "net"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Parse(tc.in)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Parse (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseMalformed(t *testing.T) {
	for _, in := range [][]byte{
		nil,
		[]byte("add@/devices/x"),       // header not terminated
		msg("libudev"),                 // udevd's format
		msg("@/devices/x"),             // no action
		msg("add@devices/x"),           // relative path
		msg("add@/d", "NOEQUALS"),      // not KEY=VALUE
		msg("add@/d", "=v"),            // empty key
		msg("add@/d", "ACTION=remove"), // disagrees with the header
		msg("add@/d", "DEVPATH=/e"),    // disagrees with the header
		msg("add@/d", "SEQNUM=x"),      // not a number
		msg("add@/d", "SEQNUM=99999999999999999999999"), // out of range
	} {
		if e, err := Parse(in); !errors.Is(err, ErrMalformed) {
			t.Errorf("Parse(%q) = %+v, %v; want ErrMalformed", in, e, err)
		}
	}
}

func TestRDMA(t *testing.T) {
	for e, want := range map[Event]bool{
		{Subsystem: "infiniband"}: true, {Subsystem: "infiniband_verbs"}: true, {Subsystem: "infiniband_mad"}: true,
		{Subsystem: "misc", DevName: "infiniband/rdma_cm"}: true,
		{Subsystem: "misc", DevName: "fuse"}:               false, {Subsystem: "net"}: false, {}: false,
	} {
		if got := e.RDMA(); got != want {
			t.Errorf("%+v.RDMA() = %v, want %v", e, got, want)
		}
	}
}

func FuzzParse(f *testing.F) {
	f.Add(msg("add@/devices/virtual/net/rv0/infiniband/rxe0/infiniband_verbs/uverbs0", "ACTION=add",
		"SUBSYSTEM=infiniband_verbs", "DEVNAME=infiniband/uverbs0", "SEQNUM=1"))
	f.Add(msg("remove@/d", "SUBSYSTEM=infiniband"))
	f.Add([]byte("libudev\x00\xfe\xed\xca\xfe"))
	f.Fuzz(func(t *testing.T, b []byte) {
		e, err := Parse(b)
		if err != nil {
			if !errors.Is(err, ErrMalformed) {
				t.Fatalf("error %v does not match ErrMalformed", err)
			}
			return
		}
		if e.Action == "" || !strings.HasPrefix(e.DevPath, "/") {
			t.Fatalf("accepted %q as %+v", b, e)
		}
	})
}

func TestChangedNil(t *testing.T) {
	var c *Conn
	if !c.Changed() {
		t.Fatal("Changed on a nil Conn (no events here): want true")
	}
}
