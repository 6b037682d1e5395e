// Command rdma is a static, drop-in replacement for iproute2's rdma tool,
// built on package nldev: same options, same commands, same text and JSON.
//
// Usage:
//
//	rdma [ OPTIONS ] OBJECT { COMMAND | help }
//	rdma [ -f[orce] ] -b[atch] filename
//
// Every object of iproute2's rdma is here (dev, link, resource, system,
// statistic and monitor, with their commands), with its options (-V, -d,
// -dd, -j, -p, -r, -o) and batch files (-b, -f). The README lists the
// deliberate differences.
package main

import (
	"fmt"
	"io"
	"os"
)

// version is what -V reports, in iproute2's format.
const version = "rdmastack"

func main() {
	if err := run(os.Stdout, os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

const usage = `Usage: rdma [ OPTIONS ] OBJECT { COMMAND | help }
       rdma [ -f[orce] ] -b[atch] filename
where  OBJECT := { dev | link | resource | monitor | system | statistic | help }
       OPTIONS := { -V[ersion] | -d[etails] | -j[son] | -p[retty] | -r[aw]}
`

// run is the whole command: args are the arguments after the program name.
// Output goes to stdout; the returned error is what the caller prints on
// stderr before exiting with status 1.
func run(stdout io.Writer, args []string) error {
	o, words, err := parseOptions(args)
	if err != nil {
		return err
	}
	if o.version {
		_, err := fmt.Fprintf(stdout, "rdma utility, iproute2-%s\n", version)
		return err
	}
	if o.help {
		_, err := io.WriteString(stdout, usage)
		return err
	}
	if o.batch != "" {
		return runBatch(stdout, o)
	}
	return runCommand(stdout, o, words)
}

// runCommand dispatches one command line (after the options) to its
// object, in iproute2's order: a prefix selects the first object it
// matches ("s" is system, "st" statistic).
func runCommand(stdout io.Writer, o options, words []string) error {
	return dispatch(stdout, o, words, "object", printUsage(usage),
		help(usage),
		command{"dev", cmdDev}, command{"link", cmdLink}, command{"resource", cmdResource},
		command{"system", cmdSystem}, command{"statistic", cmdStat}, command{"monitor", cmdMonitor})
}
