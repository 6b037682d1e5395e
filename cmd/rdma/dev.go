package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/rdmastack/rdmastack/nldev"
)

const devUsage = `Usage: rdma dev show [DEV]
       rdma dev add DEVNAME type TYPE parent PARENT_DEVNAME
       rdma dev delete DEVNAME
       rdma dev set [DEV] name DEVNAME
       rdma dev set [DEV] netns { NSNAME | PID }
       rdma dev set [DEV] adaptive-moderation [on|off]
`

// cmdDev is "rdma dev ...".
func cmdDev(stdout io.Writer, o options, args []string) error {
	return dispatch(stdout, o, args, "dev command", devShow,
		command{"add", devAdd},
		command{"delete", func(_ io.Writer, o options, args []string) error { return devDelete(o, args) }},
		command{"show", devShow}, command{"list", devShow},
		command{"set", devSet},
		help(devUsage))
}

// devShow prints every device, or the one named by args[0]. The session's
// dump answers both; iproute2 asks again per device.
func devShow(stdout io.Writer, o options, args []string) error {
	s, err := openSession(stdout, o)
	if err != nil {
		return err
	}
	defer s.Close()
	p := newPrinter(stdout, o)
	devs := s.devs
	if len(args) > 0 {
		d, ok := s.lookup(args[0])
		if !ok {
			p.flush() // iproute2 still prints the empty JSON array
			return fmt.Errorf("Wrong device name - %s", args[0])
		}
		devs = []nldev.Device{d}
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

// devSet is "rdma dev set DEV name NEW | netns NS | adaptive-moderation on|off".
func devSet(stdout io.Writer, o options, args []string) error {
	if len(args) == 0 {
		return fmt.Errorf("Please provide device name.")
	}
	s, d, err := openSessionFor(stdout, o, args[0])
	if err != nil {
		return err
	}
	defer s.Close()
	args = args[1:]
	if len(args) == 0 {
		_, err := io.WriteString(stdout, devUsage)
		return err
	}
	switch {
	case matches(args[0], "name"):
		if len(args) < 2 {
			return fmt.Errorf("Please provide device new name.")
		}
		return s.c.Rename(d.Index, args[1])
	case matches(args[0], "netns"):
		if len(args) < 2 {
			return fmt.Errorf("Please provide device name.")
		}
		return s.c.SetNetns(d.Index, args[1])
	case matches(args[0], "adaptive-moderation"):
		if len(args) < 2 {
			_, err := io.WriteString(stdout, devUsage)
			return err
		}
		switch {
		case matches(args[1], "on"):
			return s.c.SetAdaptiveModeration(d.Index, true)
		case matches(args[1], "off"):
			return s.c.SetAdaptiveModeration(d.Index, false)
		}
		return fmt.Errorf("Unknown parameter '%s'.", args[1])
	}
	return fmt.Errorf("Unknown parameter '%s'.", args[0])
}

// devAdd is "rdma dev add NAME type smi parent PARENT".
func devAdd(stdout io.Writer, o options, args []string) error {
	if len(args) == 0 {
		return fmt.Errorf("Please provide a device name to add.")
	}
	name := args[0]
	if len(args) < 2 || !matches(args[1], "type") {
		_, err := io.WriteString(stdout, devUsage)
		return err
	}
	if len(args) < 3 {
		return fmt.Errorf("Please provide a device type name.")
	}
	if !strings.EqualFold(args[2], "smi") {
		return fmt.Errorf("Invalid device type %s", args[2])
	}
	if len(args) < 4 || !matches(args[3], "parent") {
		_, err := io.WriteString(stdout, devUsage)
		return err
	}
	if len(args) < 5 {
		return fmt.Errorf("Please provide device name.")
	}
	s, parent, err := openSessionFor(stdout, o, args[4])
	if err != nil {
		return err
	}
	defer s.Close()
	return s.c.AddSubDevice(parent.Index, name, nldev.DeviceTypeSMI)
}

// devDelete is "rdma dev delete NAME".
func devDelete(o options, args []string) error {
	if len(args) == 0 {
		return fmt.Errorf("Please provide device name.")
	}
	s, d, err := openSessionFor(io.Discard, o, args[0])
	if err != nil {
		return err
	}
	defer s.Close()
	if len(args) > 1 {
		return fmt.Errorf("Unknown parameter %s", args[1])
	}
	return s.c.DeleteSubDevice(d.Index)
}
