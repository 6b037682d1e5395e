package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/rdmastack/rdmastack/nldev"
)

const statUsage = `Usage: rdma [ OPTIONS ] statistic { COMMAND | help }
       rdma statistic show
       rdma statistic show link [ DEV/PORT_INDEX ]
       rdma statistic show mr [ mrn MRN ]
       rdma statistic OBJECT show
       rdma statistic OBJECT show link [ DEV/PORT_INDEX ] [ FILTER-NAME FILTER-VALUE ]
       rdma statistic OBJECT mode
       rdma statistic OBJECT set COUNTER_SCOPE [DEV/PORT_INDEX] auto {CRITERIA | off} [ optional-counters { on | off } ]
       rdma statistic OBJECT bind COUNTER_SCOPE [DEV/PORT_INDEX] [OBJECT-ID] [COUNTER-ID]
       rdma statistic OBJECT unbind COUNTER_SCOPE [DEV/PORT_INDEX] [COUNTER-ID]
       rdma statistic mode [ supported ] [ link [ DEV/PORT_INDEX ] ]
       rdma statistic set link [ DEV/PORT_INDEX ] optional-counters [ OPTIONAL-COUNTERS ]
       rdma statistic unset link [ DEV/PORT_INDEX ] optional-counters
where  OBJECT: = { qp }
       CRITERIA : = { type | pid | type,pid }
       COUNTER_SCOPE: = { link | dev }
       FILTER_NAME: = { cntn | lqpn | pid | qp-type }
`

// statSession is one statistic command: the device map, the printer and
// the command's remaining words.
type statSession struct {
	*session
	p *printer
}

func openStat(stdout io.Writer, o options) (*statSession, error) {
	s, err := openSession(stdout, o)
	if err != nil {
		return nil, err
	}
	return &statSession{session: s, p: newPrinter(stdout, o)}, nil
}

// cmdStat is "rdma statistic ...".
func cmdStat(stdout io.Writer, o options, args []string) error {
	return dispatch(stdout, o, args, "statistic command", statShow,
		command{"show", statShow}, command{"list", statShow},
		help(statUsage),
		command{"qp", statQP}, command{"mr", statMR}, command{"mode", statMode},
		command{"set", func(stdout io.Writer, o options, args []string) error { return statSetOptional(stdout, o, args, true) }},
		command{"unset", func(stdout io.Writer, o options, args []string) error { return statSetOptional(stdout, o, args, false) }})
}

// statShow is "statistic show [link [DEV[/PORT]] | mr ...]".
func statShow(stdout io.Writer, o options, args []string) error {
	if len(args) > 0 {
		switch {
		case matches(args[0], "link"):
			args = args[1:]
		case matches(args[0], "mr"):
			return statMR(stdout, o, args[1:])
		case matches(args[0], "help"):
			_, err := io.WriteString(stdout, statUsage)
			return err
		default:
			return fmt.Errorf("Unknown parameter '%s'.", args[0])
		}
	}
	return statEachPort(stdout, o, args, false, func(s *statSession, d nldev.Device, port uint32, _ []string) error {
		ctrs, err := s.c.PortCounters(d.Index, port)
		if err != nil {
			return err
		}
		p := s.p
		p.str("ifname", "link %s/", d.Name)
		p.uint("port", "%d ", uint64(port))
		statCounters(p, ctrs)
		return p.end()
	})
}

// statCounters prints counters as iproute2's res_get_hwcounters does: each
// on its own indented line in text ("name value "), a number in JSON.
// iproute2 before 6.7 put them all on one line unless -p was given.
func statCounters(p *printer, ctrs []nldev.Counter) {
	for _, c := range ctrs {
		textOnly(p, p.sl+"    ")
		p.uint(c.Name, strings.ReplaceAll(c.Name, "%", "%%")+" %d ", c.Value)
	}
}

// statPort is one port a statistic command works on.
type statPort struct {
	dev  nldev.Device
	port uint32
}

// statLinks reads the optional DEV[/PORT] argument as iproute2's
// rd_exec_link does and returns the ports it selects (the commands skip
// port 0), and the words after it. With strict, a port is required.
func (s *statSession) statLinks(args []string, strict bool) ([]statPort, []string, error) {
	var out []statPort
	if len(args) == 0 {
		for _, d := range s.devs {
			for port := uint32(1); port <= d.Ports; port++ {
				out = append(out, statPort{d, port})
			}
		}
		return out, nil, nil
	}
	arg := args[0]
	name := arg
	if i := strings.LastIndexByte(arg, '/'); i >= 0 {
		name = arg[:i]
	}
	d, found := s.lookup(name)
	var port uint32
	all := !strict
	bad := false
	if i := strings.IndexByte(arg, '/'); i < 0 {
		bad = strict
	} else {
		rest := arg[i+1:]
		switch {
		case strings.HasPrefix(rest, "-"):
			bad, all = strict, false
		case rest != "" && rest[0] >= '0' && rest[0] <= '9':
			all = false
			port, _ = leadingNumber(rest)
			bad = port == 0
		case rest != "":
			bad = true
		}
		if strict && port == 0 {
			bad = true
		}
	}
	if !found || port > d.Ports || (port == 0 && bad) {
		return nil, nil, fmt.Errorf("Wrong device name")
	}
	first := port
	if first == 0 {
		if !all {
			return nil, args[1:], nil // DEV/-: no port
		}
		first = 1
	}
	last := first
	if all {
		last = d.Ports
	}
	for p := first; p <= last; p++ {
		out = append(out, statPort{d, p})
	}
	return out, args[1:], nil
}

// statEachPort runs fn for every port the DEV[/PORT] argument selects,
// printing iproute2's empty JSON array even when the argument is wrong.
func statEachPort(stdout io.Writer, o options, args []string, strict bool,
	fn func(s *statSession, d nldev.Device, port uint32, rest []string) error) error {
	s, err := openStat(stdout, o)
	if err != nil {
		return err
	}
	defer s.Close()
	ports, rest, err := s.statLinks(args, strict)
	if err != nil {
		s.p.flush()
		return err
	}
	for _, sp := range ports {
		if err := fn(s, sp.dev, sp.port, rest); err != nil {
			s.p.flush()
			return err
		}
	}
	return s.p.flush()
}

// statMRFilters are the filters of "statistic show mr" (iproute2's
// stat_mr_valid_filters: mrn only, so there is no "dev DEV").
var statMRFilters = []filterDef{{"mrn", true, true}}

// statMR is "statistic show mr [mrn N]": every device's MR statistics.
func statMR(stdout io.Writer, o options, args []string) error {
	fs, err := parseFilters(args, statMRFilters)
	if err != nil {
		return err
	}
	s, err := openStat(stdout, o)
	if err != nil {
		return err
	}
	defer s.Close()
	for _, d := range s.devs {
		var mrs []nldev.MRStats
		var err error
		if id, ok := fs.doitIndex(); ok {
			var one nldev.MRStats
			if one, err = s.c.MRStat(d.Index, id); err == nil {
				mrs = []nldev.MRStats{one}
			}
		}
		if mrs == nil {
			// The dump is also iproute2's fallback when the lookup fails.
			if mrs, err = s.c.MRStats(d.Index); err != nil {
				s.p.flush()
				return err
			}
		}
		for _, m := range mrs {
			if fs.num("mrn", m.MRN, true) {
				continue
			}
			printDev(s.p, m.DevIndex, m.DevName)
			s.p.uint("mrn", "mrn %d ", uint64(m.MRN))
			statCounters(s.p, m.Counters)
			if err := s.p.end(); err != nil {
				return err
			}
		}
	}
	return s.p.flush()
}
