package main

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/rdmastack/rdmastack/ib"
	"github.com/rdmastack/rdmastack/nldev"
)

// statQPFilters are the filters of "statistic qp show" (iproute2's
// stat_valid_filters).
var statQPFilters = []filterDef{{"cntn", true, false}, {"lqpn", true, false}, {"pid", true, false},
	{"qp-type", false, false}, {"optional-counters", false, false}}

// statQP is "statistic qp ...".
func statQP(stdout io.Writer, o options, args []string) error {
	return dispatch(stdout, o, args, "parameter", statQPShow,
		command{"show", statQPShow}, command{"list", statQPShow},
		command{"mode", statQPMode}, command{"set", statQPSet},
		command{"bind", func(stdout io.Writer, o options, args []string) error { return statQPBind(stdout, o, args, true) }},
		command{"unbind", func(stdout io.Writer, o options, args []string) error { return statQPBind(stdout, o, args, false) }},
		help(statUsage))
}

// statLinkArgs strips the optional "link" keyword in front of DEV/PORT;
// it reports false for another word.
func statLinkArgs(args []string) ([]string, bool) {
	if len(args) == 0 {
		return nil, true
	}
	if matches(args[0], "link") {
		return args[1:], true
	}
	return args, false
}

// statQPShow is "statistic qp show [link DEV[/PORT] [FILTER VALUE]...]".
func statQPShow(stdout io.Writer, o options, args []string) error {
	args, ok := statLinkArgs(args)
	if !ok {
		if matches(args[0], "help") {
			_, err := io.WriteString(stdout, statUsage)
			return err
		}
		return fmt.Errorf("Unknown parameter '%s'.", args[0])
	}
	return statEachPort(stdout, o, args, false, func(s *statSession, d nldev.Device, port uint32, rest []string) error {
		fs, err := parseFilters(rest, statQPFilters)
		if err != nil {
			return err
		}
		ctrs, err := s.c.QPCounters(d.Index, port)
		if err != nil {
			return err
		}
		for _, qc := range ctrs {
			if statQPFiltered(fs, qc) {
				continue
			}
			printStatQPCounter(s.p, qc)
			if err := s.p.end(); err != nil {
				return err
			}
		}
		return nil
	})
}

// statQPFiltered applies the filters as iproute2's res_counter_line does.
func statQPFiltered(fs filters, qc nldev.QPCounter) bool {
	var typ ib.QPType // iproute2 compares type 0 when the attribute is absent
	if qc.QPType != nil {
		typ = *qc.QPType
	}
	if fs.num("cntn", qc.ID, true) || fs.str("qp-type", typ.String()) ||
		fs.num("pid", qc.Owner.PID, qc.Owner.PID != 0) {
		return true
	}
	for _, n := range qc.LQPNs {
		if fs.num("lqpn", n, true) {
			return true
		}
	}
	return false
}

// printStatQPCounter prints one QP counter in iproute2's order: link,
// cntn, [qp-type], [pid], [comm], the counters, then the bound QPs.
func printStatQPCounter(p *printer, qc nldev.QPCounter) {
	printLink(p, qc.DevIndex, qc.DevName, qc.Port)
	p.uint("cntn", "cntn %d ", uint64(qc.ID))
	if qc.QPType != nil {
		p.str("qp-type", "qp-type %s ", qc.QPType.String())
	}
	printPID(p, qc.Owner)
	printComm(p, qc.Owner)
	statCounters(p, qc.Counters)
	if p.json {
		lqpns := make([]uint64, len(qc.LQPNs))
		for i, n := range qc.LQPNs {
			lqpns[i] = uint64(n)
		}
		jsonOnly(p, "lqpn", lqpns)
		return
	}
	items := make([]string, len(qc.LQPNs))
	for i, n := range qc.LQPNs {
		items[i] = strconv.FormatUint(uint64(n), 10)
	}
	textOnly(p, p.sl+"    LQPN: <"+strings.Join(items, ",")+">")
}

// statQPMode is "statistic qp mode [link DEV[/PORT]]".
func statQPMode(stdout io.Writer, o options, args []string) error {
	args, ok := statLinkArgs(args)
	if !ok {
		if matches(args[0], "help") {
			_, err := io.WriteString(stdout, statUsage)
			return err
		}
		return fmt.Errorf("Unknown parameter '%s'.", args[0])
	}
	return statEachPort(stdout, o, args, false, func(s *statSession, d nldev.Device, port uint32, _ []string) error {
		return s.printMode(d, port)
	})
}

func (s *statSession) printMode(d nldev.Device, port uint32) error {
	m, err := s.c.QPCounterMode(d.Index, port)
	if err != nil {
		return err
	}
	printLink(s.p, d.Index, d.Name, port)
	s.p.str("mode", "mode %s ", statModeText(m))
	return s.p.end()
}

// statModeText is iproute2 HEAD's mode string: "qp auto off", or
// "qp auto type,pid on optional-counters off" (the optional-counters part
// came with iproute2 6.15, commit a03f4053).
func statModeText(m nldev.QPCounterMode) string {
	if m.Mode != nldev.CounterModeAuto {
		return "qp auto off"
	}
	var names []string
	if m.Mask&nldev.AutoModeQPType != 0 {
		names = append(names, "type")
	}
	if m.Mask&nldev.AutoModePID != 0 {
		names = append(names, "pid")
	}
	if len(names) == 0 {
		return "qp auto off"
	}
	opt := m.OptionalCounters != nil && *m.OptionalCounters
	return "qp auto " + strings.Join(names, ",") + " on optional-counters " + onOffText(opt)
}

func onOffText(b bool) string {
	if b {
		return "on"
	}
	return "off"
}

// statQPSet is "statistic qp set link DEV[/PORT] auto {off | CRITERIA on
// [optional-counters on|off]}"; without "auto ..." it prints the mode.
func statQPSet(stdout io.Writer, o options, args []string) error {
	if len(args) == 0 || !matches(args[0], "link") {
		if len(args) == 0 || matches(args[0], "help") {
			_, err := io.WriteString(stdout, statUsage)
			return err
		}
		return fmt.Errorf("Unknown parameter '%s'.", args[0])
	}
	return statEachPort(stdout, o, args[1:], false, func(s *statSession, d nldev.Device, port uint32, rest []string) error {
		if len(rest) == 0 {
			return s.printMode(d, port)
		}
		if !matches(rest[0], "auto") {
			return fmt.Errorf("Unknown parameter '%s'.", rest[0])
		}
		mask, opt, err := parseAutoMode(rest[1:])
		if err != nil {
			return err
		}
		if opt != nil {
			return s.c.SetQPCounterAutoOptional(d.Index, port, mask, *opt)
		}
		return s.c.SetQPCounterAuto(d.Index, port, mask)
	})
}

// parseAutoMode reads "off" or "CRITERIA on [optional-counters on|off]".
func parseAutoMode(args []string) (nldev.AutoModeMask, *bool, error) {
	if len(args) == 0 {
		return 0, nil, fmt.Errorf("Please provide an auto mode: off or CRITERIA on")
	}
	if matches(args[0], "off") {
		if len(args) > 1 {
			return 0, nil, fmt.Errorf("Unknown parameter '%s'.", args[1])
		}
		return 0, nil, nil
	}
	var mask nldev.AutoModeMask
	for _, c := range strings.Split(args[0], ",") {
		switch c {
		case "type":
			mask |= nldev.AutoModeQPType
		case "pid":
			mask |= nldev.AutoModePID
		case "":
		default:
			return 0, nil, fmt.Errorf("Unknown auto mode '%s'.", c)
		}
	}
	if mask == 0 {
		return 0, nil, fmt.Errorf("Unknown auto mode '%s'.", args[0])
	}
	if len(args) < 2 || !matches(args[1], "on") {
		if len(args) < 2 {
			return 0, nil, fmt.Errorf("Please provide on after the auto mode criteria")
		}
		return 0, nil, fmt.Errorf("Unknown parameter '%s'.", args[1])
	}
	rest := args[2:]
	if len(rest) == 0 {
		return mask, nil, nil
	}
	if !matches(rest[0], "optional-counters") || len(rest) < 2 {
		return 0, nil, fmt.Errorf("Unknown parameter '%s'.", rest[0])
	}
	var on bool
	switch rest[1] {
	case "on":
		on = true
	case "off":
	default:
		return 0, nil, fmt.Errorf("optional-counters: expected \"on\" or \"off\", got %q", rest[1])
	}
	if len(rest) > 2 {
		return 0, nil, fmt.Errorf("Unknown parameter '%s'.", rest[2])
	}
	return mask, &on, nil
}

// statQPBind is "statistic qp bind link DEV/PORT lqpn N [cntn M]" and
// "statistic qp unbind link DEV/PORT cntn M [lqpn N]"; an unbind without
// lqpn unbinds every QP of the counter.
func statQPBind(stdout io.Writer, o options, args []string, bind bool) error {
	if len(args) == 0 || !matches(args[0], "link") {
		if len(args) == 0 || matches(args[0], "help") {
			_, err := io.WriteString(stdout, statUsage)
			return err
		}
		return fmt.Errorf("Unknown parameter '%s'.", args[0])
	}
	return statEachPort(stdout, o, args[1:], true, func(s *statSession, d nldev.Device, port uint32, rest []string) error {
		first, second := "lqpn", "cntn"
		if !bind {
			first, second = second, first
		}
		a, rest, err := statNumberArg(rest, first)
		if err != nil {
			return err
		}
		b, hasB := uint32(0), len(rest) > 0
		if hasB {
			if b, rest, err = statNumberArg(rest, second); err != nil {
				return err
			}
		}
		if len(rest) > 0 {
			return fmt.Errorf("Unknown parameter '%s'.", rest[0])
		}
		switch {
		case bind && hasB:
			return s.c.BindQPToCounter(d.Index, port, a, b)
		case bind:
			_, err := s.c.BindQP(d.Index, port, a)
			return err
		case hasB:
			return s.c.UnbindQP(d.Index, port, a, b)
		}
		qc, err := s.c.QPCounter(d.Index, port, a)
		if err != nil {
			return err
		}
		for _, n := range qc.LQPNs {
			if err := s.c.UnbindQP(d.Index, port, a, n); err != nil {
				return err
			}
		}
		return nil
	})
}

// statNumberArg reads "NAME N" (NAME may be abbreviated).
func statNumberArg(args []string, name string) (uint32, []string, error) {
	if len(args) == 0 {
		return 0, nil, fmt.Errorf("Please provide %s", name)
	}
	if !matches(args[0], name) {
		return 0, nil, fmt.Errorf("Unknown parameter '%s'.", args[0])
	}
	if len(args) < 2 {
		return 0, nil, fmt.Errorf("Please provide a value for %s", name)
	}
	if strings.ContainsAny(args[1], ",-") {
		return 0, nil, fmt.Errorf("The parameter %s shouldn't include range", name)
	}
	n, err := strconv.ParseUint(args[1], 10, 32)
	if err != nil {
		return 0, nil, fmt.Errorf("Invalid %s %q", name, args[1])
	}
	return uint32(n), args[2:], nil
}
