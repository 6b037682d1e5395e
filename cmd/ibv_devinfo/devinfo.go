package main

import (
	"bufio"
	"fmt"
	"io"
	"path/filepath"

	"github.com/rdmastack/rdmastack/device"
	"github.com/rdmastack/rdmastack/ib"
	"github.com/rdmastack/rdmastack/internal/sysfs"
	"github.com/rdmastack/rdmastack/uverbs"
)

// devices lists the devices user space can open, as ibv_get_device_list.
func devices() ([]device.Device, error) {
	snap, err := device.List()
	if err != nil {
		return nil, &exitError{msg: "Failed to get IB devices list: " + err.Error(), code: 255}
	}
	return snap.Verbs(), nil
}

// list is -l: the device names.
func list(stdout io.Writer) error {
	devs, err := devices()
	if err != nil {
		return err
	}
	s := "s"
	if len(devs) == 1 {
		s = ""
	}
	w := bufio.NewWriter(stdout)
	fmt.Fprintf(w, "%d HCA%s found:\n", len(devs), s)
	for _, d := range devs {
		fmt.Fprintf(w, "\t%s\n", d.Name)
	}
	fmt.Fprintf(w, "\n")
	return w.Flush()
}

func devinfo(stdout io.Writer, o *options) error {
	devs, err := devices()
	if err != nil {
		return err
	}
	if o.dev != "" {
		for _, d := range devs {
			if d.Name == o.dev {
				return printDevice(stdout, d, o)
			}
		}
		return &exitError{msg: fmt.Sprintf("IB device '%s' wasn't found", o.dev), code: 255}
	}
	if len(devs) == 0 {
		return &exitError{msg: "No IB devices found", code: 255}
	}
	var first error
	for _, d := range devs {
		if err := printDevice(stdout, d, o); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// printDevice is rdma-core's print_hca_cap.
func printDevice(stdout io.Writer, d device.Device, o *options) error {
	ctx, err := d.Open()
	if err != nil {
		return &exitError{msg: "Failed to open device: " + err.Error(), code: 1}
	}
	defer ctx.Close()
	a, err := ctx.QueryDevice()
	if err != nil {
		return &exitError{msg: "Failed to query device props: " + err.Error(), code: 2}
	}
	port := uint8(o.port) // rdma-core passes the port as a uint8_t
	if port != 0 && port > a.PhysPortCount {
		return &exitError{msg: "Invalid port requested for device", code: 4}
	}
	w := bufio.NewWriter(stdout)
	defer w.Flush()
	p := func(format string, args ...any) { fmt.Fprintf(w, format, args...) }
	tr := d.Transport()
	p("hca_id:\t%s\n", d.Name)
	p("\ttransport:\t\t\t%s (%d)\n", tr, int(tr))
	if fw := a.FirmwareString(d.DriverID); fw != "" {
		p("\tfw_ver:\t\t\t\t%s\n", fw)
	}
	p("\tnode_guid:\t\t\t%s\n", a.NodeGUID)
	p("\tsys_image_guid:\t\t\t%s\n", a.SysImageGUID)
	p("\tvendor_id:\t\t\t0x%04x\n", a.VendorID)
	p("\tvendor_part_id:\t\t\t%d\n", int32(a.VendorPartID))
	p("\thw_ver:\t\t\t\t0x%X\n", a.HWVersion)
	if s, err := sysfs.ReadString(filepath.Join(d.SysfsPath, "board_id")); err == nil {
		if s != "" {
			p("\tboard_id:\t\t\t%s\n", s)
		}
	}
	p("\tphys_port_cnt:\t\t\t%d\n", a.PhysPortCount)
	if o.verbose {
		printVerbose(p, a, ctx)
	}
	for n := 1; n <= int(a.PhysPortCount); n++ {
		if port != 0 && n != int(port) {
			continue
		}
		pa, err := ctx.QueryPort(n)
		if err != nil {
			w.Flush()
			return &exitError{msg: fmt.Sprintf("Failed to query port %d props: %v", n, err), code: 1}
		}
		printPort(p, pa, n, o.verbose, tr)
		if o.verbose {
			if err := printGIDs(p, ctx, pa, n); err != nil {
				w.Flush()
				return &exitError{msg: fmt.Sprintf("Failed to query gid to port %d: %v", n, err), code: 1}
			}
		}
		p("\n")
	}
	return w.Flush()
}

func printPort(p func(string, ...any), pa *uverbs.PortAttr, n int, verbose bool, tr uverbs.Transport) {
	p("\t\tport:\t%d\n", n)
	p("\t\t\tstate:\t\t\t%s (%d)\n", portState(pa.State), pa.State)
	p("\t\t\tmax_mtu:\t\t%s (%d)\n", pa.MaxMTU, pa.MaxMTU)
	p("\t\t\tactive_mtu:\t\t%s (%d)\n", pa.ActiveMTU, pa.ActiveMTU)
	p("\t\t\tsm_lid:\t\t\t%d\n", pa.SMLID)
	p("\t\t\tport_lid:\t\t%d\n", pa.LID)
	p("\t\t\tport_lmc:\t\t0x%02x\n", pa.LMC)
	p("\t\t\tlink_layer:\t\t%s\n", pa.LinkLayer)
	if !verbose {
		return
	}
	p("\t\t\tmax_msg_sz:\t\t0x%x\n", pa.MaxMsgSize)
	p("\t\t\tport_cap_flags:\t\t0x%08x\n", uint32(pa.Caps))
	p("\t\t\tport_cap_flags2:\t0x%04x\n", uint16(pa.Caps2))
	p("\t\t\tmax_vl_num:\t\t%s (%d)\n", vlString(pa.MaxVLNum), pa.MaxVLNum)
	p("\t\t\tbad_pkey_cntr:\t\t0x%x\n", pa.BadPKeyCounter)
	p("\t\t\tqkey_viol_cntr:\t\t0x%x\n", pa.QKeyViolCounter)
	p("\t\t\tsm_sl:\t\t\t%d\n", pa.SMSL)
	p("\t\t\tpkey_tbl_len:\t\t%d\n", pa.PKeyTableLen)
	p("\t\t\tgid_tbl_len:\t\t%d\n", int32(pa.GIDTableLen))
	p("\t\t\tsubnet_timeout:\t\t%d\n", pa.SubnetTimeout)
	p("\t\t\tinit_type_reply:\t%d\n", pa.InitTypeReply)
	p("\t\t\tactive_width:\t\t%sX (%d)\n", pa.ActiveWidth, pa.ActiveWidth)
	// rdma-core 50+ prefers active_speed_ex when the kernel reports it.
	speed := uverbs.Speed(pa.ActiveSpeed)
	if pa.ActiveSpeedEx != 0 {
		speed = uverbs.Speed(pa.ActiveSpeedEx)
	}
	p("\t\t\tactive_speed:\t\t%s (%d)\n", speed, uint32(speed))
	if tr == uverbs.TransportIB {
		p("\t\t\tphys_state:\t\t%s (%d)\n", physState(pa.PhysState), pa.PhysState)
	}
}

// printGIDs prints the port's non-empty GIDs as print_all_port_gids does:
// every index below gid_tbl_len whose interface id (bytes 8-15) is not
// zero; RoCE v2 entries as inet_ntop writes them, the others as eight
// hex groups, with the type appended on Ethernet ports.
func printGIDs(p func(string, ...any), ctx *uverbs.Context, pa *uverbs.PortAttr, port int) error {
	table, err := ctx.QueryGIDTable()
	if err != nil {
		return err
	}
	byIndex := map[uint32]uverbs.GIDEntry{}
	for _, e := range table {
		if int(e.Port) == port {
			byIndex[e.Index] = e
		}
	}
	for i := uint32(0); i < pa.GIDTableLen; i++ {
		e, ok := byIndex[i]
		if !ok || nullGID(e.GID) {
			continue
		}
		v2 := e.Type == ib.GIDTypeRoCEv2
		suffix := ""
		if pa.LinkLayer == ib.LinkLayerEthernet {
			if v2 {
				suffix = ", RoCE v2"
			} else {
				suffix = ", RoCE v1"
			}
		}
		if v2 {
			p("\t\t\tGID[%3d]:\t\t%s%s\n", i, ntop(e.GID), suffix)
		} else {
			g := e.GID
			p("\t\t\tGID[%3d]:\t\t%02x%02x:%02x%02x:%02x%02x:%02x%02x:%02x%02x:%02x%02x:%02x%02x:%02x%02x%s\n", i,
				g[0], g[1], g[2], g[3], g[4], g[5], g[6], g[7], g[8], g[9], g[10], g[11], g[12], g[13], g[14], g[15], suffix)
		}
	}
	return nil
}

func nullGID(g ib.GID) bool {
	for _, b := range g[8:] {
		if b != 0 {
			return false
		}
	}
	return true
}

func portState(s ib.PortState) string {
	switch s {
	case ib.PortDown:
		return "PORT_DOWN"
	case ib.PortInit:
		return "PORT_INIT"
	case ib.PortArmed:
		return "PORT_ARMED"
	case ib.PortActive:
		return "PORT_ACTIVE"
	}
	return "invalid state"
}

func physState(s ib.PhysState) string {
	switch s {
	case 1:
		return "SLEEP"
	case 2:
		return "POLLING"
	case 3:
		return "DISABLED"
	case 4:
		return "PORT_CONFIGURATION TRAINNING"
	case 5:
		return "LINK_UP"
	case 6:
		return "LINK_ERROR_RECOVERY"
	case 7:
		return "PHY TEST"
	}
	return "invalid physical state"
}

func vlString(v uint8) string {
	switch v {
	case 1:
		return "1"
	case 2:
		return "2"
	case 3:
		return "4"
	case 4:
		return "8"
	case 5:
		return "15"
	}
	return "invalid value"
}
