package device_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"time"

	"github.com/rdmastack/rdmastack/device"
	"github.com/rdmastack/rdmastack/nldev"
)

// A CNI plugin's ADD moves the RDMA device into the pod's network
// namespace, its DEL brings it back. Both are safe to repeat: DEL after
// the namespace is gone, or after the device already came back, succeeds.
// The node GUID names the device, since its name may change across moves.
// (TestIntegrationNetNSExamples runs it on Soft-RoCE.)
func ExampleMoveToNetNSByGUID() {
	guid, err := device.ParseVFGUID(os.Getenv("RDMA_DEVICE_GUID"))
	if err != nil {
		log.Fatal(err)
	}
	pod := device.NetNSPath(os.Getenv("CNI_NETNS"))
	switch os.Getenv("CNI_COMMAND") {
	case "ADD":
		err = device.MoveToNetNSByGUID(guid, pod)
	case "DEL":
		err = device.ReturnFromNetNSByGUID(guid, pod)
	}
	switch {
	case errors.Is(err, nldev.ErrSharedMode):
		fmt.Println("devices move only in exclusive mode: rdma system set netns exclusive")
	case errors.Is(err, nldev.ErrDriverCannotMove):
		fmt.Println("this device's driver cannot move it")
	case err != nil:
		log.Fatal(err)
	default:
		fmt.Println("ok")
	}
}

// Watch the devices of this network namespace for a few seconds: the
// first update lists every device as added, later ones what changed.
// (TestIntegrationNetNSExamples runs it on Soft-RoCE.)
func ExampleWatch() {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	w, err := device.Watch(ctx)
	if err != nil {
		log.Fatal(err)
	}
	defer w.Close()
	for u := range w.Updates() {
		for _, c := range u.Changes {
			fmt.Println(c)
		}
		fmt.Println(len(u.Snapshot.Devices), "devices")
	}
}
