// Package rdma is librdmacm's rdma_get_devices / rdma_free_devices contract
// in Go, without rdma-core.
//
// GetDevices returns a slice the caller owns, holding one opened and
// queried device per RDMA device (the device and every port queried, as
// librdmacm does). The devices behind it are cached per process and shared
// between lists and every other user: each list holds one reference on
// each device in it, and FreeDevices drops those references and frees only
// the list — never a context still in use. FreeDevices(nil) and a second
// FreeDevices of the same list do nothing.
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
package rdma
