// Package rdma is librdmacm in Go, without rdma-core and without cgo: a
// program lists the RDMA devices (GetDevices) and connects queue pairs
// through the connection manager, which resolves a peer's IP address to a
// device and a route, as rdma_resolve_addr and rdma_connect do.
//
//	id, err := rdma.CreateID(rdma.PortSpaceTCP, ib.QPTypeRC)
//	defer id.Close()
//	err = id.ResolveAddr(ctx, netip.AddrPort{}, server, 2*time.Second)
//	err = id.ResolveRoute(ctx, 2*time.Second)
//	vctx, err := id.Device().Context() // the device's shared verbs context
//	// ... a PD and a CQ on vctx ...
//	qp, err := id.CreateQP(pd, uverbs.QPInit{SendCQ: cq, RecvCQ: cq, Cap: cap})
//	err = id.Connect(ctx, nil)
//
// Package rsocket, beside this one, gives net.Conn and net.Listener over
// such connections.
//
// # Devices
//
// GetDevices returns a slice the caller owns, holding one opened and
// queried device per RDMA device (the device and every port queried, as
// librdmacm does). The devices behind it are cached per process and shared
// between lists and every other user: each list holds one reference on
// each device in it, and FreeDevices drops those references and frees only
// the list — never a context still in use. FreeDevices(nil) and a second
// FreeDevices of the same list do nothing. A device's verbs context
// (Device.Context) is shared too: its Close is refused with
// uverbs.ErrShared, and Attr and Port return copies.
//
// A device that disappears is marked dead: its methods return errors
// matching ErrDeviceRemoved, and its context is closed when its last list
// is freed. A list that is garbage-collected without FreeDevices is
// reported as a leak (SetLeakReporter; SetDebug adds where the list was
// obtained), and Outstanding counts the lists not yet freed.
//
//	devs, err := rdma.GetDevices()
//	if err != nil {
//		return err // errors.Is(err, rdma.ErrNoDevices) when there are none
//	}
//	defer rdma.FreeDevices(devs)
//	for _, d := range devs {
//		attr, _ := d.Attr()
//		fmt.Println(d.Name(), attr.PhysPortCount)
//	}
//
// # Connection manager
//
// An EventChannel is an open /dev/infiniband/rdma_cm (found through RDMA
// netlink, its ABI version checked); IDs are created on it, and the
// events of all its ids come through GetEvent, which parks the goroutine
// in the netpoller (a context ends the wait, Close wakes it). An ID binds
// or resolves an address, which ties it to one of GetDevices' cached
// devices (Device), opened then if it was not yet: as librdmacm, a
// process that only connects opens the devices its ids use, not every
// device of the host; CreateQP makes its QP on that device's context, and
// Connect, Accept, Reject and Disconnect drive the connection, as
// rdma_connect and friends do. The kernel chooses every QP attribute
// (INIT_QP_ATTR); GetEvent completes an active connection when the reply
// comes and reports it as ESTABLISHED. Event statuses are typed errors: a
// unix.Errno, or for REJECTED a RejectReason (RejectInvalidServiceID when
// nobody listens; on iWARP a RejectErrno), which matches
// unix.ECONNREFUSED. Closing an id never
// waits for its events to be acknowledged; Ack is accounting only.
//
// An id made by the package-level CreateID has a channel of its own and
// is synchronous, as librdmacm's ids without a channel: ResolveAddr,
// ResolveRoute, Connect and Accept return once their event has come.
// Migrate moves an id to another channel (or one of its own). CreateEP,
// DialEP, ListenEP and GetRequest are librdmacm's rdma_create_ep and
// rdma_get_request: synchronous ids that come with their PD, CQ and QP.
//
// SetOption sets the id options (TOS, REUSEADDR, AFONLY, ACK_TIMEOUT);
// Notify forwards a QP's COMM_EST. UD ids (PortSpaceUDP) connect over
// SIDR: the active side's ESTABLISHED carries the peer's QP number, qkey
// and address handle attributes (Event.Peer). JoinMulticast joins a group
// and attaches the id's QP when MULTICAST_JOIN comes.
//
// # Streams
//
// Package rsocket gives net.Conn and net.Listener over RC connections
// made with this package's connection manager, wire-compatible with
// librdmacm's rsockets.
package rdma
