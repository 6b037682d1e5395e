package ah

import (
	"testing"

	"github.com/rdmastack/rdmastack/ib"
)

func TestSync(t *testing.T) {
	tab := newRoCETable(t)
	v4, _ := ib.ParseGID("::ffff:10.0.0.1")
	v6, _ := ib.ParseGID("fd00::1")
	link := gid(1)
	kernel := []EntryInfo{
		{GID: link, Type: ib.GIDTypeRoCEv1, Index: 0, Port: 1, Netdev: "veth0"},
		{GID: link, Type: ib.GIDTypeRoCEv2, Index: 1, Port: 1, Netdev: "veth0"},
		{GID: v4, Type: ib.GIDTypeRoCEv2, Index: 3, Port: 1, Netdev: "veth0"},
	}
	if a, d, err := tab.Sync(kernel); err != nil || a != 3 || d != 0 {
		t.Fatalf("first sync: +%d -%d %v", a, d, err)
	}
	held, _ := tab.Get(1, 3)

	// The IPv4 address goes away and an IPv6 one comes, in another slot.
	kernel = append(kernel[:2], EntryInfo{GID: v6, Type: ib.GIDTypeRoCEv2, Index: 4, Port: 1, Netdev: "veth0"})
	if a, d, err := tab.Sync(kernel); err != nil || a != 1 || d != 1 {
		t.Fatalf("second sync: +%d -%d %v", a, d, err)
	}
	if held.State() != EntryPendingDelete {
		t.Fatalf("the removed, referenced entry is %v", held.State())
	}
	if got := tab.Entries(); len(got) != 3 || got[2].GID != v6 {
		t.Fatalf("entries after sync: %+v", got)
	}
	// Unchanged entries keep their identity.
	e, _ := tab.Get(1, 0)
	if a, d, err := tab.Sync(kernel); err != nil || a != 0 || d != 0 {
		t.Fatalf("idempotent sync: +%d -%d %v", a, d, err)
	}
	if e2, _ := tab.Get(1, 0); e2 != e {
		t.Fatal("an unchanged entry was replaced")
	} else {
		e2.Put()
	}
	e.Put()
	if _, _, err := tab.Sync([]EntryInfo{{GID: v6, Port: 9}}); err == nil {
		t.Fatal("an entry on an unknown port was accepted")
	}
	held.Put()
	if err := tab.Close(); err != nil {
		t.Fatal(err)
	}
}
