package cmatest

import (
	"bytes"
	"io"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/rdmastack/rdmastack/rdma"
)

// TestHandle: each event goes to its own handler, with the node of its
// id; an error event goes to none, counts one connection fewer and is
// printed as the C programs print it; an event without a handler is
// ignored.
func TestHandle(t *testing.T) {
	id := &rdma.ID{}
	n := &Node{ID: id}
	var out bytes.Buffer
	tt := &Test{Prog: "prog", Stdout: &out, Stderr: io.Discard, ByID: map[*rdma.ID]*Node{id: n}}
	var got []rdma.EventType
	h := func(want *Node) Handler {
		return func(node *Node, ev *rdma.Event) int {
			if node != want {
				t.Errorf("%v: node %p, want %p", ev.Type, node, want)
			}
			got = append(got, ev.Type)
			return 7
		}
	}
	hs := Handlers{rdma.EventAddrResolved: h(n), rdma.EventRouteResolved: h(n), rdma.EventConnectRequest: h(nil),
		rdma.EventEstablished: h(n), rdma.EventDisconnected: h(n), rdma.EventMulticastJoin: h(n)}
	left := 10
	for _, typ := range []rdma.EventType{rdma.EventAddrResolved, rdma.EventRouteResolved, rdma.EventEstablished,
		rdma.EventDisconnected, rdma.EventMulticastJoin} {
		if ret := tt.Handle(&rdma.Event{Type: typ, ID: id}, hs, &left); ret != 7 {
			t.Errorf("%v: status %d, want the handler's 7", typ, ret)
		}
	}
	if ret := tt.Handle(&rdma.Event{Type: rdma.EventConnectRequest, ID: &rdma.ID{}}, hs, &left); ret != 7 {
		t.Errorf("CONNECT_REQUEST: status %d", ret)
	}
	if len(got) != 6 || left != 10 {
		t.Errorf("handled %v, %d left", got, left)
	}
	errs := []rdma.EventType{rdma.EventAddrError, rdma.EventRouteError, rdma.EventConnectError,
		rdma.EventUnreachable, rdma.EventRejected, rdma.EventMulticastError}
	for _, typ := range errs {
		if ret := tt.Handle(&rdma.Event{Type: typ, ID: id, Status: unix.ETIMEDOUT}, hs, &left); ret != -int(unix.ETIMEDOUT) {
			t.Errorf("%v: status %d, want %d", typ, ret, -int(unix.ETIMEDOUT))
		}
	}
	if len(got) != 6 || left != 10-len(errs) {
		t.Errorf("after the errors: handled %v, %d left", got, left)
	}
	if want := "prog: event: RDMA_CM_EVENT_ADDR_ERROR, error: -110\n"; !bytes.HasPrefix(out.Bytes(), []byte(want)) {
		t.Errorf("printed %q, want it to start with %q", out.String(), want)
	}
	if ret := tt.Handle(&rdma.Event{Type: rdma.EventEstablished, ID: id}, nil, &left); ret != 0 || left != 10-len(errs) {
		t.Errorf("no handler: status %d, %d left", ret, left)
	}
}

// TestFlags: the options cmatose and udaddy share, with the counts'
// defaults, and what they leave to the program.
func TestFlags(t *testing.T) {
	f := NewFlags("7471")
	if f.Connections != 1 || f.Count != 10 || f.Size != 100 || f.Hints.Port != "7471" || f.Client() {
		t.Fatalf("defaults: %+v", f)
	}
	for _, o := range []struct {
		opt rune
		arg string
	}{{'s', "h"}, {'b', "b"}, {'f', "ip"}, {'t', "0x20"}, {'c', "3"}, {'C', "0"}, {'S', "64"}} {
		if !f.Option(o.opt, o.arg, io.Discard) {
			t.Errorf("-%c not taken", o.opt)
		}
	}
	if f.Dst != "h" || f.Src != "b" || !f.Hints.Numeric || !f.SetTOS || f.TOS != 0x20 ||
		f.Connections != 3 || f.Count != 0 || f.Size != 64 || !f.Client() {
		t.Errorf("parsed: %+v", f)
	}
	for _, opt := range []rune{'p', 'P', 'm', 'a'} {
		if f.Option(opt, "1", io.Discard) {
			t.Errorf("-%c taken: it is the program's", opt)
		}
	}
}
