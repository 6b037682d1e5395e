package nldev_test

import (
	"errors"
	"fmt"
	"os"

	"github.com/rdmastack/rdmastack/nldev"
)

// Count each device's tracked objects and list its queue pairs with their
// owners, as "rdma resource show" and "rdma resource show qp" do.
func ExampleClient_QPs() {
	c, err := nldev.Dial()
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()
	sums, err := c.ResourceSummary()
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, s := range sums {
		n, _ := s.Count(nldev.ResourceQP)
		fmt.Printf("%s: %d QPs\n", s.DevName, n)
		qps, err := c.QPs(s.DevIndex)
		if err != nil {
			fmt.Println(err)
			return
		}
		for _, q := range qps {
			fmt.Printf("  port %d lqpn %d %s %s owner %s\n", q.Port, q.LQPN, q.Type, q.State, q.Owner)
		}
	}
}

// Look a completion queue up by number; a number the kernel does not
// track gives an error matching os.ErrNotExist.
func ExampleClient_CQ() {
	c, err := nldev.Dial()
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()
	cq, err := c.CQ(0, 7)
	switch {
	case errors.Is(err, os.ErrNotExist):
		fmt.Println("no CQ 7 on device 0")
	case err != nil:
		fmt.Println(err)
	default:
		fmt.Printf("cqn %d cqe %d users %d owner %s\n", cq.CQN, cq.CQE, cq.Users, cq.Owner)
	}
}
