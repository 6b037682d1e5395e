// Package ib holds the small value types of the InfiniBand architecture
// that every other package of rdmastack speaks: GUIDs, GIDs, node types,
// port states, physical port states and link layers, and the one
// ErrNotSupported sentinel. A program reads them from the other packages'
// results and prints or compares them:
//
//	guid := ib.GUIDFromUint64(0x025056fffe8a1b2c)
//	fmt.Println(guid) // 0250:56ff:fe8a:1b2c
//	gid, err := ib.ParseGID("::ffff:10.0.0.1") // a RoCE v2 GID of an IPv4 address
//	_, err = ctx.CreateCQ(attr) // from any package:
//	if errors.Is(err, ib.ErrNotSupported) { ... } // the kernel or driver lacks it
//
// The types live in one package of their own so that nldev, uverbs,
// device and rdma can share them without importing each other. Each type
// prints the way iproute2's rdma tool and rdma-core's tools print it.
package ib
