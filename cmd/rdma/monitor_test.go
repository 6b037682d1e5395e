package main

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/rdmastack/rdmastack/nldev"
)

func TestPrintEvent(t *testing.T) {
	ev := nldev.Event{Type: nldev.EventNetdevAttach, DevIndex: 3, DevName: "rxe3", Port: 1, NetdevIndex: 9, Netdev: "veth3",
		HasDev: true, HasPort: true, HasNetdevIndex: true, HasNetdev: true}
	var b bytes.Buffer
	p := newPrinter(&b, options{})
	printEvent(p, ev)
	p.end()
	if got, want := b.String(), "[NETDEV_ATTACH]\tdev 3 rxe3 port 1 netdev 9 veth3\n"; got != want {
		t.Fatalf("text %q, want %q", got, want)
	}

	b.Reset()
	p = newPrinter(&b, options{json: true})
	printEvent(p, nldev.Event{Type: nldev.EventRegister, DevIndex: 0, DevName: "rxe0", HasDev: true})
	p.end()
	p.writeObjects()
	var got map[string]any
	if err := json.Unmarshal(b.Bytes(), &got); err != nil {
		t.Fatalf("%q: %v", b.String(), err)
	}
	if got["event_type"] != "[REGISTER]" || got["rdma_index"] != 0.0 || got["rdma_dev"] != "rxe0" || len(got) != 3 {
		t.Fatalf("JSON %v", got)
	}
}
