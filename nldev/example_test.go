package nldev_test

import (
	"errors"
	"fmt"

	"github.com/rdmastack/rdmastack/nldev"
)

// List the RDMA devices of this network namespace, as "rdma dev" does.
func Example() {
	c, err := nldev.Dial()
	if errors.Is(err, nldev.ErrNoRDMA) {
		fmt.Println("no RDMA in this kernel")
		return
	}
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()
	devs, err := c.Devices()
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, d := range devs {
		fmt.Printf("%d: %s: node_type %s node_guid %s\n", d.Index, d.Name, d.NodeType, d.NodeGUID)
	}
}
