// Package device is one typed model of every RDMA device visible in the
// caller's network namespace, joining RDMA netlink (devices, ports and
// their char devices) with sysfs (link layer, the PCI or auxiliary parent,
// and a fallback where netlink lacks a command).
//
//	snap, err := device.List()
//	for _, d := range snap.Devices {
//		fmt.Println(d.Name, d.Uverbs.Path(), d.Ports[0].Netdev)
//	}
//	d, ok := snap.ByNetdev("eth0")
package device
