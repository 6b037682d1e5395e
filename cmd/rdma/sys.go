package main

import (
	"fmt"
	"io"

	"github.com/rdmastack/rdmastack/nldev"
)

const sysUsage = `Usage: rdma system show [ netns ]
       rdma system set netns { shared | exclusive }
`

const sysSetUsage = `Usage: rdma system set [PARAM] value
            system set netns { shared | exclusive }
            system set privileged-qkey { on | off }
`

// cmdSystem is "rdma system ...".
func cmdSystem(stdout io.Writer, o options, args []string) error {
	return dispatch(stdout, o, args, "system command", sysShow,
		command{"show", sysShow},
		command{"set", func(stdout io.Writer, _ options, args []string) error { return sysSet(stdout, args) }},
		help(sysUsage))
}

// sysShow prints the settings on one line, as iproute2 does — in text even
// with -j, since iproute2's system show never opens a JSON context.
func sysShow(stdout io.Writer, o options, args []string) error {
	if len(args) > 0 && !matches(args[0], "netns") && !matches(args[0], "privileged-qkey") && !matches(args[0], "monitor") {
		return fmt.Errorf("Unknown parameter '%s'.", args[0])
	}
	c, err := nldev.Dial()
	if err != nil {
		return err
	}
	defer c.Close()
	sys, err := c.System()
	if err != nil {
		return err
	}
	text := o
	text.json = false
	p := newPrinter(stdout, text)
	p.str("netns", "netns %s ", sys.NetnsMode.String())
	if sys.PrivilegedQKey != nil {
		p.onOff("privileged-qkey", "privileged-qkey %s ", *sys.PrivilegedQKey)
	}
	p.onOff("monitor", "monitor %s ", sys.Monitor != nil && *sys.Monitor)
	p.onOff("copy-on-fork", "copy-on-fork %s", sys.CopyOnFork != nil && *sys.CopyOnFork)
	return p.end()
}

// sysSet is "rdma system set netns MODE | privileged-qkey on|off".
func sysSet(stdout io.Writer, args []string) error {
	if len(args) == 0 || matches(args[0], "help") {
		_, err := io.WriteString(stdout, sysSetUsage)
		return err
	}
	c, err := nldev.Dial()
	if err != nil {
		return err
	}
	defer c.Close()
	switch {
	case matches(args[0], "netns"):
		if len(args) < 2 {
			return fmt.Errorf("valid options are: { shared | exclusive }")
		}
		m, err := nldev.ParseNetnsMode(args[1])
		if err != nil {
			return fmt.Errorf("valid options are: { shared | exclusive }")
		}
		return c.SetNetnsMode(m)
	case matches(args[0], "privileged-qkey"):
		if len(args) < 2 {
			return fmt.Errorf("valid options are: { on | off }")
		}
		switch args[1] {
		case "on":
			return c.SetPrivilegedQKey(true)
		case "off":
			return c.SetPrivilegedQKey(false)
		}
		return fmt.Errorf("Error: argument of \"privileged-qkey\" must be \"on\" or \"off\", not \"%s\"", args[1])
	}
	return fmt.Errorf("Unknown parameter '%s'.", args[0])
}
