package uverbs_test

import (
	"fmt"
	"log"

	"github.com/rdmastack/rdmastack/device"
	"github.com/rdmastack/rdmastack/ib"
	"github.com/rdmastack/rdmastack/uverbs"
)

// List the devices user space can open (package device lists them), with
// their first port's state.
func Example() {
	snap, err := device.List()
	if err != nil {
		log.Fatal(err)
	}
	for _, d := range snap.Verbs() {
		ctx, err := d.Open()
		if err != nil {
			log.Fatal(err)
		}
		attr, err := ctx.QueryDevice()
		if err != nil {
			log.Fatal(err)
		}
		port, err := ctx.QueryPort(1)
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(d.Name, attr.NodeGUID, port.State, port.ActiveMTU)
		ctx.Close()
	}
}

// Create the objects of an RC queue pair and take it to INIT.
func ExamplePD_CreateQP() {
	ctx, err := uverbs.OpenName("rxe0")
	if err != nil {
		log.Fatal(err)
	}
	defer ctx.Close() // destroys everything below, too
	pd, err := ctx.AllocPD()
	if err != nil {
		log.Fatal(err)
	}
	cq, err := ctx.CreateCQ(uverbs.CQAttr{CQE: 16})
	if err != nil {
		log.Fatal(err)
	}
	qp, err := pd.CreateQP(uverbs.QPInit{Type: ib.QPTypeRC, SendCQ: cq, RecvCQ: cq,
		Cap: uverbs.QPCap{MaxSendWR: 16, MaxRecvWR: 16, MaxSendSGE: 1, MaxRecvSGE: 1}})
	if err != nil {
		log.Fatal(err)
	}
	err = qp.Modify(&uverbs.QPAttr{State: ib.QPStateInit, Port: 1, AccessFlags: uverbs.AccessRemoteWrite},
		uverbs.QPAttrState|uverbs.QPAttrPKeyIndex|uverbs.QPAttrPort|uverbs.QPAttrAccessFlags)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("qp", qp.Num())
}
