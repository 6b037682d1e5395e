package main

import (
	"fmt"
	"io"

	"github.com/rdmastack/rdmastack/nldev"
)

const linkUsage = `Usage: rdma link show [DEV/PORT_INDEX]
Usage: rdma link add NAME type TYPE netdev NETDEV
Usage: rdma link delete NAME
`

// cmdLink is "rdma link ...".
func cmdLink(stdout io.Writer, o options, args []string) error {
	return dispatch(stdout, o, args, "link command", linkShow,
		command{"add", func(_ io.Writer, o options, args []string) error { return linkAdd(o, args) }},
		command{"delete", func(_ io.Writer, o options, args []string) error { return linkDelete(o, args) }},
		command{"show", linkShow}, command{"list", linkShow},
		help(linkUsage))
}

// linkShow prints every port of every device, or those DEV/PORT selects.
func linkShow(stdout io.Writer, o options, args []string) error {
	s, err := openSession(stdout, o)
	if err != nil {
		return err
	}
	defer s.Close()
	p := newPrinter(stdout, o)
	var ports []nldev.Port
	if len(args) == 0 {
		for _, d := range s.devs {
			pp, err := s.c.Ports(d.Index)
			if err != nil {
				p.flush()
				return err
			}
			ports = append(ports, pp...)
		}
	} else {
		sel, err := s.parseDevPort(args[0], true)
		if err != nil {
			p.flush() // iproute2 still prints the empty JSON array
			return err
		}
		pt, err := s.c.Port(sel.dev.Index, sel.port)
		if err != nil {
			p.flush()
			return err
		}
		ports = append(ports, pt)
	}
	for _, pt := range ports {
		printPort(p, o, pt)
		if err := p.end(); err != nil {
			return err
		}
	}
	return p.flush()
}

// printPort prints one port in iproute2's field order (rdma/link.c).
func printPort(p *printer, o options, pt nldev.Port) {
	p.jsonUint("ifindex", uint64(pt.DevIndex))
	p.str("ifname", "link %s/", pt.DevName)
	p.uint("port", "%d ", uint64(pt.Index))
	if pt.IB != nil {
		p.str("subnet_prefix", "subnet_prefix %s ", pt.IB.SubnetPrefix.String())
		p.uint("lid", "lid %d ", uint64(pt.IB.LID))
		p.uint("sm_lid", "sm_lid %d ", uint64(pt.IB.SMLID))
		p.uint("lmc", "lmc %d ", uint64(pt.IB.LMC))
	}
	p.str("state", "state %s ", pt.State.String())
	p.str("physical_state", "physical_state %s ", pt.PhysState.String())
	if pt.Netdev != "" {
		p.str("netdev", "netdev %s ", pt.Netdev)
		if o.details {
			p.uint("netdev_index", "netdev_index %d ", uint64(pt.NetdevIndex))
		} else {
			p.jsonUint("netdev_index", uint64(pt.NetdevIndex))
		}
	}
	if o.details && pt.IB != nil {
		p.list("caps", p.sl+"    caps: <", pt.IB.Caps.Names(), ", ", ">")
	}
}

// linkAdd is "rdma link add NAME type TYPE netdev NETDEV".
func linkAdd(o options, args []string) error {
	if len(args) == 0 {
		return fmt.Errorf("Please provide a link name to add.")
	}
	name := args[0]
	if len(args) < 2 || !matches(args[1], "type") {
		if len(args) >= 2 {
			return fmt.Errorf("Unknown parameter '%s'.", args[1])
		}
		return fmt.Errorf("Please provide a link type name.")
	}
	if len(args) < 3 {
		return fmt.Errorf("Please provide a link type name.")
	}
	typ := args[2]
	if len(args) < 4 || !matches(args[3], "netdev") {
		if len(args) >= 4 {
			return fmt.Errorf("Unknown parameter '%s'.", args[3])
		}
		return fmt.Errorf("Please provide a net device name.")
	}
	if len(args) < 5 {
		return fmt.Errorf("Please provide a net device name.")
	}
	c, err := nldev.Dial()
	if err != nil {
		return err
	}
	defer c.Close()
	return c.AddLink(name, nldev.LinkType(typ), args[4])
}

// linkDelete is "rdma link delete NAME".
func linkDelete(o options, args []string) error {
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
	return s.c.DeleteLink(d.Index)
}
