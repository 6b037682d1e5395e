package ib_test

import (
	"fmt"

	"github.com/rdmastack/rdmastack/ib"
)

func ExampleGUIDFromUint64() {
	// RDMA netlink carries node GUIDs as host-order numbers.
	g := ib.GUIDFromUint64(0x025056fffe8a1b2c)
	fmt.Println(g)
	// Output: 0250:56ff:fe8a:1b2c
}
