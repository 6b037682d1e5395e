// Command ibv_devices is a static drop-in for rdma-core's ibv_devices,
// built on package device: it lists the RDMA devices user space can open
// with their node GUIDs, in the same text.
package main

import (
	"bufio"
	"fmt"
	"io"
	"os"

	"github.com/rdmastack/rdmastack/device"
)

func main() {
	if err := run(os.Stdout, os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

// run is the whole command; ibv_devices takes no arguments and, like
// rdma-core's, ignores any it is given.
func run(stdout io.Writer, args []string) error {
	snap, err := device.List()
	if err != nil {
		return fmt.Errorf("Failed to get IB devices list: %w", err)
	}
	devs := snap.Verbs()
	w := bufio.NewWriter(stdout)
	fmt.Fprintf(w, "    %-16s\t   node GUID\n", "device")
	fmt.Fprintf(w, "    %-16s\t----------------\n", "------")
	for _, d := range devs {
		fmt.Fprintf(w, "    %-16s\t%016x\n", d.Name, d.NodeGUID.Uint64())
	}
	return w.Flush()
}
