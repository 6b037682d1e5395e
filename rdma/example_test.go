package rdma_test

import (
	"fmt"
	"log"

	"github.com/rdmastack/rdmastack/rdma"
)

// List the devices librdmacm would (rdma_get_devices), each opened and
// queried, with the state and active MTU of their ports, and give the
// list back (rdma_free_devices). The devices stay open for the
// process's other users.
// (TestIntegrationExamples runs it on Soft-RoCE and checks what it
// prints.)
func ExampleGetDevices() {
	devs, err := rdma.GetDevices()
	if err != nil {
		log.Fatal(err) // errors.Is(err, rdma.ErrNoDevices) when there are none
	}
	defer rdma.FreeDevices(devs)
	for _, d := range devs {
		attr, err := d.Attr()
		if err != nil {
			log.Fatal(err)
		}
		for p := 1; p <= int(attr.PhysPortCount); p++ {
			port, err := d.Port(p)
			if err != nil {
				log.Fatal(err)
			}
			fmt.Println(d.Name(), p, port.State, port.ActiveMTU)
		}
	}
}
