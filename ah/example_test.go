package ah_test

import (
	"fmt"

	"github.com/rdmastack/rdmastack/ah"
	"github.com/rdmastack/rdmastack/ib"
)

// An attribute keeps its source GID entry alive across a delete, and says
// it is stale.
func Example() {
	tab, _ := ah.NewTable(ah.PortSpec{Port: 1, Size: 16, RoCE: true})
	gid, _ := ib.ParseGID("::ffff:10.0.0.1")
	tab.Add(1, 3, gid, ib.GIDTypeRoCEv2, "eth0")

	var a ah.Attr
	a.Type, a.Port = ah.TypeRoCE, 1
	sgid, _ := tab.Get(1, 3) // held
	dgid, _ := ib.ParseGID("::ffff:10.0.0.2")
	ah.MoveGRHSGIDAttr(&a, dgid, 0, 64, 0, sgid) // a owns the reference now

	var b ah.Attr
	ah.Copy(&b, &a) // b holds its own reference
	fmt.Println("refs:", sgid.Refs())

	tab.Delete(1, 3) // the address went away
	fmt.Println("stale:", a.Stale(), sgid.State())
	ah.Destroy(&a)
	ah.Destroy(&b)
	ah.Destroy(&b) // harmless
	fmt.Println(sgid.State(), tab.Close())
	// Output:
	// refs: 3
	// stale: true pending-delete
	// freed <nil>
}
