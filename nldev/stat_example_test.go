package nldev_test

import (
	"errors"
	"fmt"

	"github.com/rdmastack/rdmastack/nldev"
)

// Print the hardware counters of every port, as "rdma statistic show"
// does, and count the QPs bound to QP counters.
func ExampleClient_PortCounters() {
	c, err := nldev.Dial()
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
		for port := uint32(1); port <= d.Ports; port++ {
			ctrs, err := c.PortCounters(d.Index, port)
			if errors.Is(err, nldev.ErrNoCounters) {
				continue // the driver keeps no counters
			}
			if err != nil {
				fmt.Println(err)
				return
			}
			fmt.Printf("link %s/%d", d.Name, port)
			for _, ctr := range ctrs {
				fmt.Printf(" %s %d", ctr.Name, ctr.Value)
			}
			fmt.Println()
		}
		qcs, err := c.QPCounters(d.Index, 0)
		if err != nil {
			fmt.Println(err)
			return
		}
		bound := 0
		for _, qc := range qcs {
			bound += len(qc.LQPNs)
		}
		fmt.Printf("%s: %d QP counters, %d bound QPs\n", d.Name, len(qcs), bound)
	}
}
