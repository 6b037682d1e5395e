// Command ibstat is a static drop-in for infiniband-diags' ibstat (v44),
// built on cmd/internal/ibsysfs: the same options, text, messages and
// exit statuses, read from sysfs as libibumad reads it.
//
// Usage:
//
//	ibstat [-l] [-s] [-p] [-z config] [-v] [-d] [-h] [-V] [ca_name [portnum]]
package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/rdmastack/rdmastack/cmd/internal/cflags"
	"github.com/rdmastack/rdmastack/cmd/internal/cmnode"
	"github.com/rdmastack/rdmastack/cmd/internal/ibsysfs"
)

func main() { cmnode.Exit(os.Stderr, run(os.Stdout, os.Stderr, ibsysfs.DefaultRoot, os.Args)) }

// Exit statuses: IBPANIC's exit(-1) and ibdiag_show_usage's exit(2).
var (
	errPanic = &cmnode.ExitError{Code: 255}
	errUsage = &cmnode.ExitError{Code: 2}
)

// option is one entry of ibdiag_common's option table as ibstat builds
// it: its own options, then the common ones less "CDeGKLPsty".
type option struct {
	name    string
	letter  rune
	argTmpl string // "" for no argument
	desc    string
}

var options = []option{
	{"list_of_cas", 'l', "", "list all IB devices"},
	{"short", 's', "", "short output"},
	{"port_list", 'p', "", "show port list"},
	{"config", 'z', "<config>", "use config file, default: /etc/infiniband-diags/ibdiag.conf"},
	{"verbose", 'v', "", "increase verbosity level"},
	{"debug", 'd', "", "raise debug level"},
	{"help", 'h', "", "help message"},
	{"version", 'V', "", "show version"},
}

// getoptTables are the optstring and long options ibdiag_process_opts
// makes of options ("lspz:vdhV").
func getoptTables() (string, []cflags.LongOption) {
	var short strings.Builder
	var long []cflags.LongOption
	for _, o := range options {
		short.WriteRune(o.letter)
		mode := cflags.NoArgument
		if o.argTmpl != "" {
			short.WriteByte(':')
			mode = cflags.RequiredArgument
		}
		long = append(long, cflags.LongOption{Name: o.name, Arg: mode, Val: o.letter})
	}
	return short.String(), long
}

// usage is ibdiag_show_usage's text, for stderr.
func usage(prog string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "\nUsage: %s [options] %s\n\n", prog, "<ca_name> [portnum]")
	b.WriteString("Options:\n")
	for _, o := range options {
		s := fmt.Sprintf("  --%s, -%c", o.name, o.letter)
		if o.argTmpl != "" {
			s += " " + o.argTmpl
		}
		fmt.Fprintf(&b, "%s%*s  %s\n", s, max(24-len(s), 0), "", o.desc)
	}
	b.WriteString("\nExamples:\n")
	fmt.Fprintf(&b, "  %s %s\n", prog, "-l       # list all IB devices")
	fmt.Fprintf(&b, "  %s %s\n", prog, "mthca0 2 # stat port 2 of 'mthca0'")
	b.WriteString("\n")
	return b.String()
}

// flags are ibstat's options.
type flags struct {
	list, short, ports bool
	debug              int
}

// parseArgs is ibdiag_process_opts with ibstat's process_opt; it returns
// the operands. -h and -V end the command (errUsage, or nil with done).
func parseArgs(stderr io.Writer, args []string) (f flags, operands []string, done bool, err error) {
	prog := args[0]
	optstring, longs := getoptTables()
	g := cflags.New(prog, args[1:], optstring, longs)
	for g.Next() {
		switch g.Opt() {
		case 'l':
			f.list = true
		case 's':
			f.short = true
		case 'p':
			f.ports = true
		case 'z', 'v':
			// The configuration file names a CA, port and timeouts
			// for the MAD tools; ibstat reads none of them.
		case 'd':
			f.debug++
		case 'V':
			fmt.Fprintf(stderr, "%s BUILD VERSION: 44.0\n", prog)
			return f, nil, true, nil
		default: // 'h', or getopt's '?' after its message
			if err := g.Err(); err != nil {
				fmt.Fprintln(stderr, err)
			}
			io.WriteString(stderr, usage(prog))
			return f, nil, true, errUsage
		}
	}
	return f, g.Args(), false, nil
}

// command is one run of ibstat.
type command struct {
	stdout *bufio.Writer
	stderr io.Writer
	sys    *ibsysfs.Sysfs
}

// panicf is IBPANIC from function fn: the message with errno's text, and
// exit(-1).
func (c *command) panicf(fn, format string, args ...any) error {
	c.stdout.Flush()
	fmt.Fprintf(c.stderr, "ibpanic: [%d] %s: %s: %s\n", os.Getpid(), fn, fmt.Sprintf(format, args...), ibsysfs.Strerror(c.sys.Errno))
	return errPanic
}

// warnf is libibmad's IBWARN from function fn.
func (c *command) warnf(fn, format string, args ...any) {
	fmt.Fprintf(c.stderr, "ibwarn: [%d] %s: %s\n", os.Getpid(), fn, fmt.Sprintf(format, args...))
}

// run is the whole command: args is the command line with the program
// name, the text usage and -V print; root is the sysfs directory of the
// devices.
func run(stdout, stderr io.Writer, root string, args []string) error {
	if len(args) == 0 {
		args = []string{"ibstat"}
	}
	f, operands, done, err := parseArgs(stderr, args)
	if done {
		return err
	}
	c := &command{
		stdout: bufio.NewWriter(stdout),
		stderr: stderr,
		sys:    &ibsysfs.Sysfs{Root: root, Warn: stderr, Debug: f.debug >= 2},
	}
	devPort := -1
	if len(operands) > 1 {
		devPort = int(int32(cflags.Long(operands[1])))
	}
	c.sys.Init()
	cas, err := c.sys.CAList()
	if err != nil {
		return c.panicf("main", "can't list IB device names")
	}
	if len(operands) > 0 {
		found := false
		for _, n := range cas {
			if n == operands[0] {
				cas, found = []string{n}, true
				break
			}
		}
		if !found {
			return c.panicf("main", "'%s' IB device can't be found", operands[0])
		}
	}
	if f.ports {
		for _, n := range cas {
			guids, err := c.sys.PortGUIDs(n, 64)
			if err != nil {
				return c.panicf("main", "can't list ports")
			}
			for _, g := range guids {
				if g != 0 {
					fmt.Fprintf(c.stdout, "0x%016x\n", g)
				}
			}
		}
		return c.stdout.Flush()
	}
	for _, n := range cas {
		if f.list {
			fmt.Fprintf(c.stdout, "%s\n", n)
		} else if err := c.caStat(n, devPort, f.short); err != nil {
			return c.panicf("main", "stat of IB device '%s' failed", n)
		}
	}
	return c.stdout.Flush()
}

// nodeTypes is node_type_str: a CA's type by node_type.
var nodeTypes = []string{"???", "CA", "Switch", "Router", "iWARP RNIC"}

func nodeType(t uint32) string {
	if t < uint32(len(nodeTypes)) {
		return nodeTypes[t]
	}
	return "???"
}

var (
	portStates = []string{"???", "Down", "Initializing", "Armed", "Active"}
	physStates = []string{"No state change", "Sleep", "Polling", "Disabled",
		"PortConfigurationTraining", "LinkUp", "LinkErrorRecovery", "PhyTest"}
)

func lookup(names []string, v uint32) string {
	if v < uint32(len(names)) {
		return names[v]
	}
	return "???"
}

// caStat is ca_stat: the CA and its ports, one port alone (portnum >= 0),
// or the CA only (short).
func (c *command) caStat(name string, portnum int, short bool) error {
	ca, err := c.sys.CA(name)
	if err != nil {
		return err
	}
	if ca.NodeType == 0 {
		return nil
	}
	w := c.stdout
	if !short && portnum >= 0 {
		if portnum > ca.NumPorts || ca.Ports[portnum] == nil {
			c.warnf("ca_stat", "%s: '%s' has no port number %d - max (%d)", nodeType(ca.NodeType), name, portnum, ca.NumPorts)
			return errPanic
		}
		fmt.Fprintf(w, "%s: '%s'\n", nodeType(ca.NodeType), ca.Name)
		c.portDump(ca.Ports[portnum], true)
		return nil
	}
	t := nodeType(ca.NodeType)
	fmt.Fprintf(w, "%s '%s'\n", t, ca.Name)
	fmt.Fprintf(w, "\t%s type: %s\n", t, ca.CAType)
	fmt.Fprintf(w, "\tNumber of ports: %d\n", ca.NumPorts)
	fmt.Fprintf(w, "\tFirmware version: %s\n", ca.FWVer)
	fmt.Fprintf(w, "\tHardware version: %s\n", ca.HWVer)
	fmt.Fprintf(w, "\tNode GUID: 0x%016x\n", ca.NodeGUID)
	fmt.Fprintf(w, "\tSystem image GUID: 0x%016x\n", ca.SystemGUID)
	if short {
		return nil
	}
	for _, p := range ca.Ports[:ca.NumPorts+1] {
		if p != nil {
			c.portDump(p, false)
		}
	}
	return nil
}

// portDump is port_dump; alone is a port asked for on the command line,
// printed without indentation.
func (c *command) portDump(p *ibsysfs.Port, alone bool) {
	pre, hdrpre := "\t\t", "\t"
	if alone {
		pre, hdrpre = "", ""
	}
	w := c.stdout
	fmt.Fprintf(w, "%sPort %d:\n", hdrpre, p.PortNum)
	fmt.Fprintf(w, "%sState: %s\n", pre, lookup(portStates, p.State))
	fmt.Fprintf(w, "%sPhysical state: %s\n", pre, lookup(physStates, p.PhysState))
	switch {
	case c.isFDR10(p):
		fmt.Fprintf(w, "%sRate: %d (FDR10)\n", pre, int32(p.Rate))
	case p.Rate != 2: // 1X SDR
		fmt.Fprintf(w, "%sRate: %d\n", pre, int32(p.Rate))
	default:
		fmt.Fprintf(w, "%sRate: 2.5\n", pre)
	}
	fmt.Fprintf(w, "%sBase lid: %d\n", pre, int32(p.BaseLID))
	fmt.Fprintf(w, "%sLMC: %d\n", pre, int32(p.LMC))
	fmt.Fprintf(w, "%sSM lid: %d\n", pre, int32(p.SMLID))
	fmt.Fprintf(w, "%sCapability mask: 0x%08x\n", pre, p.CapMask)
	fmt.Fprintf(w, "%sPort GUID: 0x%016x\n", pre, p.PortGUID)
	fmt.Fprintf(w, "%sLink layer: %s\n", pre, p.LinkLayer)
}

// isFDR10 is ibstat's is_fdr10: the port's rate text, read again, has
// "fdr10" (any case) in the five bytes before its first ')'.
func (c *command) isFDR10(p *ibsysfs.Port) bool {
	dir := fmt.Sprintf("%s/%s/ports/%d", c.sys.RootDir(), p.CAName, p.PortNum)
	rate, err := c.sys.ReadString(dir, "rate", 32)
	if err != nil {
		return false
	}
	i := strings.IndexByte(rate, ')')
	return i >= 5 && strings.EqualFold(rate[i-5:i], "fdr10")
}
