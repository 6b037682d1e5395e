package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/rdmastack/rdmastack/nldev"
)

// statMode is "statistic mode [supported] [link [DEV[/PORT]]]": the
// enabled (or, with supported, all) optional counters of each port that
// has any.
func statMode(stdout io.Writer, o options, args []string) error {
	supported := false
	if len(args) > 0 {
		switch {
		case matches(args[0], "link"), matches(args[0], "show"):
			args = args[1:]
		case matches(args[0], "supported"):
			supported = true
			args = args[1:]
			if len(args) > 0 {
				if !matches(args[0], "link") {
					return statUnknownOrHelp(stdout, args[0])
				}
				args = args[1:]
			}
		default:
			return statUnknownOrHelp(stdout, args[0])
		}
	}
	return statEachPort(stdout, o, args, false, func(s *statSession, d nldev.Device, port uint32, _ []string) error {
		status, err := s.c.CounterStatus(d.Index, port)
		if err != nil {
			return err
		}
		var names []string
		for _, ci := range status {
			if ci.Optional && (supported || ci.Enabled) {
				names = append(names, ci.Name)
			}
		}
		if len(names) == 0 {
			return nil
		}
		key := "optional-counters"
		if supported {
			key = "supported optional-counters"
		}
		p := s.p
		p.str("ifname", "link %s/", d.Name)
		p.uint("port", "%d ", uint64(port))
		if p.json {
			jsonOnly(p, key, names)
		} else {
			// iproute2 before 6.7 put the names on the first line unless
			// -p was given.
			textOnly(p, key+" "+p.sl+"    "+strings.Join(names, ","+p.sl+"    "))
		}
		return p.end()
	})
}

func statUnknownOrHelp(stdout io.Writer, word string) error {
	if matches(word, "help") {
		_, err := io.WriteString(stdout, statUsage)
		return err
	}
	return fmt.Errorf("Unknown parameter '%s'.", word)
}

// statSetOptional is "statistic set link DEV/PORT optional-counters a,b"
// (set) and "statistic unset link DEV/PORT optional-counters" (unset): the
// named optional counters are enabled, all others disabled.
func statSetOptional(stdout io.Writer, o options, args []string, set bool) error {
	if len(args) == 0 || !matches(args[0], "link") {
		if len(args) == 0 {
			_, err := io.WriteString(stdout, statUsage)
			return err
		}
		return statUnknownOrHelp(stdout, args[0])
	}
	return statEachPort(stdout, o, args[1:], true, func(s *statSession, d nldev.Device, port uint32, rest []string) error {
		if len(rest) == 0 || !matches(rest[0], "optional-counters") {
			if len(rest) == 0 {
				return fmt.Errorf("Please provide optional-counters")
			}
			return fmt.Errorf("Unknown parameter '%s'.", rest[0])
		}
		rest = rest[1:]
		if !set {
			if len(rest) > 0 {
				return fmt.Errorf("Unknown parameter '%s'.", rest[0])
			}
			return s.c.UnsetOptionalCounters(d.Index, port)
		}
		if len(rest) == 0 || rest[0] == "" {
			return fmt.Errorf("Please provide the optional counters to enable")
		}
		if len(rest) > 1 {
			return fmt.Errorf("Unknown parameter '%s'.", rest[1])
		}
		status, err := s.c.CounterStatus(d.Index, port)
		if err != nil {
			return err
		}
		var indexes []uint32
		for _, name := range strings.Split(rest[0], ",") {
			if name == "" {
				continue
			}
			found := false
			for _, ci := range status {
				if ci.Optional && ci.Name == name {
					indexes = append(indexes, ci.Index)
					found = true
				}
			}
			if !found {
				return fmt.Errorf("%s/%d has no optional counter %q", d.Name, port, name)
			}
		}
		return s.c.SetOptionalCounters(d.Index, port, indexes)
	})
}
