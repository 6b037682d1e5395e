package main

import (
	"fmt"
	"io"

	"github.com/rdmastack/rdmastack/nldev"
)

const devUsage = `Usage: rdma dev
       rdma dev [ show | list ] [ DEV ]
`

// cmdDev is "rdma dev ...".
func cmdDev(stdout io.Writer, o options, args []string) error {
	if len(args) == 0 {
		return devShow(stdout, o, nil)
	}
	switch {
	case matches(args[0], "show"), matches(args[0], "list"):
		return devShow(stdout, o, args[1:])
	case matches(args[0], "help"):
		_, err := io.WriteString(stdout, devUsage)
		return err
	}
	return fmt.Errorf("Unknown dev command '%s'.", args[0])
}

// devShow prints every device, or the one named by args[0]. One dump
// answers both: iproute2 dumps too and then asks again per device.
func devShow(stdout io.Writer, o options, args []string) error {
	c, err := nldev.Dial()
	if err != nil {
		return err
	}
	defer c.Close()
	devs, err := c.Devices()
	if err != nil {
		return err
	}
	p := newPrinter(stdout, o)
	if len(args) > 0 {
		var found []nldev.Device
		for _, d := range devs {
			if d.Name == args[0] {
				found = append(found, d)
			}
		}
		if found == nil {
			p.flush() // iproute2 still prints the empty JSON array
			return fmt.Errorf("Wrong device name - %s", args[0])
		}
		devs = found
	}
	for _, d := range devs {
		printDevice(p, o, d)
		if err := p.end(); err != nil {
			return err
		}
	}
	return p.flush()
}

// printDevice prints one device in iproute2's field order (rdma/dev.c).
func printDevice(p *printer, o options, d nldev.Device) {
	p.uint("ifindex", "%d: ", uint64(d.Index))
	p.str("ifname", "%s: ", d.Name)
	p.str("node_type", "node_type %s ", d.NodeType.String())
	if d.Protocol != "" {
		p.str("protocol", "protocol %s ", d.Protocol.String())
	}
	if d.FirmwareVersion != "" {
		p.str("fw", "fw %s ", d.FirmwareVersion)
	}
	p.str("node_guid", "node_guid %s ", d.NodeGUID.String())
	p.str("sys_image_guid", "sys_image_guid %s ", d.SysImageGUID.String())
	if d.Type != nldev.DeviceTypeDefault {
		p.str("type", "type %s ", d.Type.String())
	}
	if d.Parent != "" {
		p.str("parent", "parent %s ", d.Parent)
	}
	if o.details {
		if d.AdaptiveModeration != nil {
			p.onOff("adaptive-moderation", "adaptive-moderation %s ", *d.AdaptiveModeration)
		}
		// The kernel always sends the capability mask; iproute2 prints
		// "caps: <>" for an empty one.
		p.list("caps", p.sl+"    caps: <", d.Caps.Names(), ", ", ">")
	}
}
