package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/rdmastack/rdmastack/nldev"
)

const resUsage = `Usage: rdma resource
          resource show [DEV]
          resource show [qp|cm_id|pd|mr|cq|ctx|srq|frmr_pools]
          resource show qp link [DEV/PORT]
          resource show qp link [DEV/PORT] [FILTER-NAME FILTER-VALUE]
          resource show cm_id link [DEV/PORT]
          resource show cm_id link [DEV/PORT] [FILTER-NAME FILTER-VALUE]
          resource show cq dev [DEV]
          resource show cq dev [DEV] [FILTER-NAME FILTER-VALUE]
          resource show pd dev [DEV]
          resource show pd dev [DEV] [FILTER-NAME FILTER-VALUE]
          resource show mr dev [DEV]
          resource show mr dev [DEV] [FILTER-NAME FILTER-VALUE]
          resource show ctx dev [DEV]
          resource show ctx dev [DEV] [FILTER-NAME FILTER-VALUE]
          resource show srq dev [DEV]
          resource show srq dev [DEV] [FILTER-NAME FILTER-VALUE]
          resource show frmr_pools dev [DEV]
          resource show frmr_pools dev [DEV] [FILTER-NAME FILTER-VALUE]
          resource set frmr_pools dev DEV aging AGING_PERIOD
          resource set frmr_pools dev DEV pinned POOL_KEY PINNED_VALUE
`

// cmdResource is "rdma resource ...".
func cmdResource(stdout io.Writer, o options, args []string) error {
	return dispatch(stdout, o, args, "resource command", resShow,
		command{"show", resShow}, command{"set", resSet}, command{"list", resShow},
		help(resUsage))
}

// resObject is one "rdma resource show OBJECT" (iproute2's RES_FUNC),
// made from its kind's table (resKind.object).
type resObject struct {
	name    string
	perLink bool // qp, cm_id: "link DEV/PORT", one query per port
	filters []filterDef
	show    func(s *resSession, dev nldev.Device, port uint32) error
}

// resObjects in iproute2's order: a prefix selects the first that matches.
var resObjects = []resObject{
	qpKind.object(), cmidKind.object(), cqKind.object(), mrKind.object(),
	pdKind.object(), ctxKind.object(), srqKind.object(), frmrKind.object(),
}

// resSession is one resource command: the session, printer and filters.
type resSession struct {
	*session
	p       *printer
	fs      filters
	details bool // send DRIVER_DETAILS: -dd on a kernel that knows it
}

// resShow is "rdma resource show ...".
func resShow(stdout io.Writer, o options, args []string) error {
	s, err := openSession(stdout, o)
	if err != nil {
		return err
	}
	defer s.Close()
	rs := &resSession{session: s, p: newPrinter(stdout, o)}
	if o.driverDetails {
		// iproute2 sends DRIVER_DETAILS always; old kernels that parse
		// strictly refuse it, so it is sent only where the kernel has it.
		if rs.details, err = s.c.HasDriverDetails(); err != nil {
			return err
		}
	}
	if len(args) == 0 {
		return rs.summary(s.devs)
	}
	if len(args) == 1 {
		if d, ok := s.lookup(args[0]); ok {
			return rs.summary([]nldev.Device{d})
		}
	}
	for i := range resObjects {
		if matches(args[0], resObjects[i].name) {
			return rs.object(&resObjects[i], args[1:])
		}
	}
	return fmt.Errorf("Unknown parameter '%s'.", args[0])
}

func (rs *resSession) opts() []nldev.ResourceOption {
	if rs.details {
		return []nldev.ResourceOption{nldev.DriverDetails}
	}
	return nil
}

// summary prints "IDX: NAME: pd N cq N ..." for each device.
func (rs *resSession) summary(devs []nldev.Device) error {
	for _, d := range devs {
		sum, err := rs.c.ResourceSummaryOf(d.Index, rs.opts()...)
		if err != nil {
			rs.p.flush()
			return err
		}
		rs.p.uint("ifindex", "%d: ", uint64(sum.DevIndex))
		rs.p.str("ifname", "%s: ", sum.DevName)
		for _, c := range sum.Counts {
			rs.p.uint(string(c.Type), strings.ReplaceAll(string(c.Type), "%", "%%")+" %d ", c.Count)
		}
		if err := rs.p.end(); err != nil {
			return err
		}
	}
	return rs.p.flush()
}

// object runs one object's show over the devices and ports its arguments
// select (iproute2's rd_exec_dev and rd_exec_link).
func (rs *resSession) object(obj *resObject, args []string) error {
	fs, err := parseFilters(args, obj.filters)
	if err != nil {
		return err
	}
	rs.fs = fs
	arg, err := devArg(args)
	if err != nil {
		return err
	}
	err = rs.walk(obj, arg)
	if ferr := rs.p.flush(); err == nil {
		err = ferr
	}
	return err
}

func (rs *resSession) walk(obj *resObject, arg string) error {
	if !obj.perLink {
		devs := rs.devs
		if arg != "" {
			d, ok := rs.lookup(arg)
			if !ok {
				return fmt.Errorf("Wrong device name - %s", arg)
			}
			devs = []nldev.Device{d}
		}
		for _, d := range devs {
			if err := obj.show(rs, d, 0); err != nil {
				return err
			}
		}
		return nil
	}
	if arg == "" {
		for _, d := range rs.devs {
			for port := uint32(0); port <= d.Ports; port++ {
				if err := obj.show(rs, d, port); err != nil {
					return err
				}
			}
		}
		return nil
	}
	d, port, all, err := rs.parseLink(arg)
	if err != nil {
		return err
	}
	for ; port <= d.Ports; port++ {
		if err := obj.show(rs, d, port); err != nil {
			return err
		}
		if !all {
			break
		}
	}
	return nil
}

// parseLink reads DEV[/PORT] as iproute2's get_port_from_argv does:
// "DEV" and "DEV/" mean every port and the port-less objects, "DEV/-" the
// port-less objects only, "DEV/N" port N.
func (rs *resSession) parseLink(arg string) (d nldev.Device, port uint32, all bool, err error) {
	name, rest, slash := arg, "", false
	if i := strings.LastIndexByte(arg, '/'); i >= 0 {
		name = arg[:i]
	}
	if i := strings.IndexByte(arg, '/'); i >= 0 {
		rest, slash = arg[i+1:], true
	}
	d, ok := rs.lookup(name)
	all = true
	bad := false
	if slash {
		switch {
		case strings.HasPrefix(rest, "-"):
			all = false
		case rest != "" && rest[0] >= '0' && rest[0] <= '9':
			all = false
			port, _ = leadingNumber(rest)
			bad = port == 0
		case rest != "":
			bad = true
		}
	}
	if !ok || port > d.Ports || (port == 0 && bad) {
		return d, 0, false, fmt.Errorf("Wrong device name")
	}
	return d, port, all, nil
}
