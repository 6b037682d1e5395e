package main

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/rdmastack/rdmastack/nldev"
)

// session is one command's connection and device map: like iproute2, it
// dumps the devices first to map names to indexes and port counts.
type session struct {
	o    options
	w    io.Writer
	c    *nldev.Client
	devs []nldev.Device
}

func openSession(w io.Writer, o options) (*session, error) {
	c, err := nldev.Dial()
	if err != nil {
		return nil, err
	}
	devs, err := c.Devices()
	if err != nil {
		c.Close()
		return nil, err
	}
	return &session{o: o, w: w, c: c, devs: devs}, nil
}

func (s *session) Close() error { return s.c.Close() }

// lookup finds a device of the map by name.
func (s *session) lookup(name string) (nldev.Device, bool) {
	for _, d := range s.devs {
		if d.Name == name {
			return d, true
		}
	}
	return nldev.Device{}, false
}

// openSessionFor opens a session and looks up the device a command names,
// failing as iproute2 does when there is none.
func openSessionFor(w io.Writer, o options, name string) (*session, nldev.Device, error) {
	s, err := openSession(w, o)
	if err != nil {
		return nil, nldev.Device{}, err
	}
	d, ok := s.lookup(name)
	if !ok {
		s.Close()
		return nil, nldev.Device{}, fmt.Errorf("Wrong device name - %s", name)
	}
	return s, d, nil
}

// portSel is what a DEV[/PORT] argument selects.
type portSel struct {
	dev  nldev.Device
	port uint32 // 0: every port
}

// parseDevPort reads a DEV[/PORT] argument as iproute2's rd_exec_link and
// get_port_from_argv do. With strict, a port is required ("link show"
// accepts "dev" alone only through strict=false).
func (s *session) parseDevPort(arg string, strict bool) (portSel, error) {
	name, port, hasSlash := arg, "", false
	if i := strings.LastIndexByte(arg, '/'); i >= 0 {
		name, port, hasSlash = arg[:i], arg[i+1:], true
	}
	d, ok := s.lookup(name)
	wrong := fmt.Errorf("Wrong device name")
	if !ok {
		return portSel{}, wrong
	}
	sel := portSel{dev: d}
	switch {
	case !hasSlash, port == "-", port == "":
		// every port (rejected below when strict)
	default:
		n, digits := leadingNumber(port)
		if digits == 0 || n == 0 {
			return portSel{}, wrong
		}
		sel.port = n
	}
	if (strict && sel.port == 0) || sel.port > d.Ports {
		return portSel{}, wrong
	}
	return sel, nil
}

// leadingNumber parses the decimal digits at the start of s, as atoi does.
func leadingNumber(s string) (uint32, int) {
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	n, err := strconv.ParseUint(s[:i], 10, 32)
	if err != nil {
		return 0, 0
	}
	return uint32(n), i
}
