// Command ibv_devinfo is a static drop-in for rdma-core's ibv_devinfo,
// built on packages device and uverbs: the same options (-d, -i, -l, -v)
// and the same text.
//
// Usage:
//
//	ibv_devinfo [-d DEV] [-i PORT] [-l] [-v]
package main

import (
	"errors"
	"fmt"
	"io"
	"os"
)

func main() {
	if err := run(os.Stdout, os.Args[1:]); err != nil {
		var ee *exitError
		if errors.As(err, &ee) {
			if ee.msg != "" {
				fmt.Fprintln(os.Stderr, ee.msg)
			}
			os.Exit(ee.code)
		}
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

// exitError carries rdma-core's exit status for a failure along with
// the message it prints on stderr.
type exitError struct {
	msg  string
	code int
}

func (e *exitError) Error() string { return e.msg }

const usage = `Usage: ibv_devinfo             print the ca attributes

Options:
  -d, --ib-dev=<dev>     use IB device <dev> (default all devices)
  -i, --ib-port=<port>   use port <port> of IB device (default all ports)
  -l, --list             print only the IB devices names
  -v, --verbose          print all the attributes of the IB device(s)
`

// options are the parsed command line.
type options struct {
	dev     string
	port    int
	list    bool
	verbose bool
}

// run is the whole command; args are the arguments after the program name.
func run(stdout io.Writer, args []string) error {
	o, err := parseArgs(stdout, args)
	if err != nil {
		return err
	}
	if o.list {
		return list(stdout)
	}
	return devinfo(stdout, o)
}
