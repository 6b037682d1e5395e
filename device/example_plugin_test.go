package device_test

import (
	"errors"
	"fmt"
	"log"

	"github.com/rdmastack/rdmastack/device"
)

// A device plugin's discovery: every device that user space can open,
// with the char devices a container using it must get (a Kubernetes
// DeviceSpec each: the same path in the container and on the host, and
// the cgroup rule's major:minor). (TestIntegrationPluginExamples runs it
// on Soft-RoCE and checks it against /dev/infiniband.)
func ExampleSnapshot_CharDevicesOf() {
	snap, err := device.List()
	if err != nil {
		log.Fatal(err)
	}
	for _, d := range snap.Verbs() {
		for _, c := range snap.CharDevicesOf(d) {
			fmt.Printf("%s %s %s c %d:%d rwm\n", d.Name, c.Kind, c.Path, c.Major, c.Minor)
		}
	}
}

// The RDMA port behind a network device: a CNI plugin or a device plugin
// given a netdev (here veth0; a VLAN, macvlan or bond on it, or an IPoIB
// interface, resolve as well), and the port's counters.
func ExampleSnapshot_PortsOfNetdev() {
	snap, err := device.List()
	if err != nil {
		log.Fatal(err)
	}
	ports, err := snap.PortsOfNetdev("veth0")
	if errors.Is(err, device.ErrUnknownNetdev) {
		fmt.Println("no RDMA port behind veth0")
		return
	}
	if err != nil {
		log.Fatal(err)
	}
	for _, np := range ports {
		pc, err := np.Device.PortCounters(np.Port.Number)
		if err != nil {
			log.Fatal(err)
		}
		_, ok := pc.HW.Get("sent_pkts")
		fmt.Printf("veth0: %s port %d (%v), sent_pkts counted: %v\n", np.Device.Name, np.Port.Number, np.Via, ok)
	}
}

// The RDMA devices of a PCI function (all of them: a function may carry
// several) and of a subfunction on the auxiliary bus, as an SR-IOV
// device plugin selects them; an address that has none is
// ErrUnknownParent (Soft-RoCE devices have no parent at all).
func ExampleSnapshot_DevicesByPCI() {
	snap, err := device.List()
	if err != nil {
		log.Fatal(err)
	}
	for _, addr := range []string{"0000:03:00.0"} {
		devs, err := snap.DevicesByPCI(addr)
		if errors.Is(err, device.ErrUnknownParent) {
			fmt.Printf("%s: no RDMA device\n", addr)
			continue
		}
		for _, d := range devs {
			fmt.Printf("%s: %s\n", addr, d.Name)
		}
	}
	if _, err := snap.DevicesByAux("mlx5_core.sf.2"); errors.Is(err, device.ErrUnknownParent) {
		fmt.Println("mlx5_core.sf.2: no RDMA device")
	}
}
