// Package device lists the RDMA devices a program can use and opens them:
// one typed model of every RDMA device visible in the caller's network
// namespace, joining RDMA netlink (devices, ports and
// their char devices) with sysfs (link layer, the PCI or auxiliary parent,
// and a fallback where netlink lacks a command).
//
//	snap, err := device.List()
//	for _, d := range snap.Devices {
//		fmt.Println(d.Name, d.Path(), d.Ports[0].Netdev)
//	}
//	d, ok := snap.ByNetdev("eth0")
//	ctx, err := d.Open() // a verbs context (*uverbs.Context)
//
// A Device embeds the uverbs.Device its verbs context opens with (name,
// index, driver id, uverbs char device); Snapshot.Verbs lists the devices
// user space can open, as libibverbs does, for ibv_devices, ibv_devinfo
// and the pingpong commands.
//
// A device plugin's questions take one call each on a snapshot:
// DevicesByPCI and DevicesByAux (every device of a PCI function or of an
// auxiliary device such as a subfunction), PortsOfNetdev (the port behind
// a network device, its VLAN, macvlan and bond uppers and an IPoIB
// interface), CharDevicesOf (the char device nodes a container needs,
// with their device numbers) and Device.PortCounters (the PMA set and the
// hw counters). Unknown input is an error matching ErrUnknownParent,
// ErrUnknownNetdev or ErrUnknownPort, each also os.ErrNotExist;
// docs/kubernetes.md maps rdmamap's and vishvananda/netlink's functions
// to these.
//
// List is meant to be called as often as a program likes (a device
// plugin's health loop): after the first call in a namespace it answers
// from its last snapshot while the kernel's events say nothing changed —
// uevents for RDMA devices and their character devices, rtnetlink link
// events for the network devices whose state the ports of rxe and siw
// follow — and reads again only what changed or what no event covers (the
// ports of hardware drivers). Where those events are not delivered (a
// network namespace of another user namespace) every call asks the kernel
// for everything.
//
// Watch streams the same snapshots as they change, each with what changed
// since the one before (added, removed, renamed, port state, netdev);
// WatchNetNS and ListNetNS do the same for another network namespace,
// named by a descriptor or a path, without moving the caller's thread.
// MoveToNetNS and ReturnFromNetNS move a device into a namespace and back
// (a CNI plugin's ADD and DEL), safe to repeat; LocateNetNS finds where a
// device is. SetVFNodeGUID and SetVFPortGUID set an SR-IOV VF's
// InfiniBand GUIDs over rtnetlink. docs/kubernetes.md has the
// details.
//
// Package rdma's GetDevices (librdmacm's device list) is built on the
// same snapshot: the process keeps one RDMA netlink socket and one uevent
// socket for both.
package device
