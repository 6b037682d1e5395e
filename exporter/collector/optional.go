package collector

import (
	"errors"
	"fmt"
	"log/slog"
	"slices"

	"github.com/rdmastack/rdmastack/ib"
	"github.com/rdmastack/rdmastack/nldev"
)

// enableOptional enables the optional counters Options.OptionalCounters
// names on every port that has them and does not count them yet, keeping
// those already enabled, once per port.
func (c *Collector) enableOptional(ports []nldev.PortID) {
	found := map[string]bool{}
	for _, p := range ports {
		key := portKey{p.Dev, p.Port}
		st, err := c.k.counterStatus(p.Dev, p.Port)
		if err != nil {
			if !errors.Is(err, nldev.ErrNoCounters) && !errors.Is(err, ib.ErrNotSupported) && !isGone(err) {
				c.once(fmt.Sprintf("opt-status/%d/%d", p.Dev, p.Port), slog.LevelWarn, "cannot read the port's optional counters", "device", p.Dev, "port", p.Port, "err", err)
			}
			continue
		}
		var keep, add []uint32
		var names []string
		for _, ci := range st {
			if !ci.Optional {
				continue
			}
			want := slices.Contains(c.opts.OptionalCounters, ci.Name)
			if want {
				found[ci.Name] = true
			}
			switch {
			case ci.Enabled:
				keep = append(keep, ci.Index)
			case want:
				add = append(add, ci.Index)
				names = append(names, ci.Name)
			}
		}
		if len(add) == 0 || c.st.optionalSet[key] {
			continue
		}
		c.st.optionalSet[key] = true
		if err := c.k.setOptionalCounters(p.Dev, p.Port, append(keep, add...)); err != nil {
			c.log.Warn("cannot enable optional counters", "device", p.Dev, "port", p.Port, "counters", names, "err", err)
			continue
		}
		c.log.Info("enabled optional counters", "device", p.Dev, "port", p.Port, "counters", names)
	}
	for _, n := range c.opts.OptionalCounters {
		if !found[n] && len(ports) > 0 {
			c.once("opt-missing/"+n, slog.LevelWarn, "no port has this optional counter", "counter", n)
		}
	}
}

// enableAuto puts every port that is not in auto mode into auto mode by QP
// type, once per port, and remembers it for Close.
func (c *Collector) enableAuto(ports []nldev.PortID) {
	for _, p := range ports {
		key := portKey{p.Dev, p.Port}
		if c.st.autoSet[key] || c.st.logged[fmt.Sprintf("auto/%d/%d", p.Dev, p.Port)] {
			continue
		}
		m, err := c.k.qpCounterMode(p.Dev, p.Port)
		if err != nil || m.Mode == nldev.CounterModeAuto {
			continue
		}
		if err := c.k.setQPCounterAuto(p.Dev, p.Port, nldev.AutoModeQPType); err != nil {
			c.once(fmt.Sprintf("auto/%d/%d", p.Dev, p.Port), slog.LevelWarn, "cannot put the port in QP counter auto mode", "device", p.Dev, "port", p.Port, "err", err)
			continue
		}
		c.st.autoSet[key] = true
		c.log.Info("QP counter auto mode on (by QP type)", "device", p.Dev, "port", p.Port)
	}
}
