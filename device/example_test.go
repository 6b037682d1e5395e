package device_test

import (
	"fmt"
	"log"

	"github.com/rdmastack/rdmastack/device"
)

// List the RDMA devices of this network namespace with their ports: state,
// link layer and network device, as `rdma link` shows them.
// (TestIntegrationExamples runs it on Soft-RoCE and checks what it
// prints.)
func Example() {
	snap, err := device.List()
	if err != nil {
		log.Fatal(err)
	}
	for _, d := range snap.Devices {
		for _, p := range d.Ports {
			fmt.Printf("%s/%d %s %s %s\n", d.Name, p.Number, p.State, p.LinkLayer, p.Netdev)
		}
	}
}
