// Command ibstatus is a static drop-in for infiniband-diags' ibstatus
// script (v44, unchanged since): every port of every device in
// /sys/class/infiniband (iWARP included), or of the devices and ports
// named as dev or dev:port, with the files shown raw as the script's
// unquoted echo shows them, and the same fatal errors and exit statuses.
//
// Usage:
//
//	ibstatus [-h] [devname[:portnum]]...
package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/rdmastack/rdmastack/cmd/internal/cmnode"
	"github.com/rdmastack/rdmastack/cmd/internal/ibsysfs"
	"github.com/rdmastack/rdmastack/internal/sysfs"
)

func main() { cmnode.Exit(os.Stderr, run(os.Stdout, os.Stderr, ibsysfs.DefaultRoot, os.Args)) }

// errFatal is the script's "exit 255" (usage and fatal).
var errFatal = &cmnode.ExitError{Code: 255}

// command is one run of the script.
type command struct {
	stdout *bufio.Writer
	stderr io.Writer
	root   string // infiniband_base
}

// run is the whole command: args is the command line with the program
// name (its base name is usage's), root the sysfs directory of the
// devices.
func run(stdout, stderr io.Writer, root string, args []string) error {
	c := &command{stdout: bufio.NewWriter(stdout), stderr: stderr, root: root}
	err := c.main(args)
	if ferr := c.stdout.Flush(); err == nil {
		err = ferr
	}
	return err
}

func (c *command) main(args []string) error {
	prog := "ibstatus"
	if len(args) > 0 {
		prog = filepath.Base(args[0])
		args = args[1:]
	}
	if len(args) > 0 && args[0] == "-h" {
		c.echo("Usage: ", prog, " [-h] [devname[:portnum]]")
		c.echo("\t-h:\tthis help screen")
		c.echo("\tExamples:")
		c.echo("\t\t" + prog + " mthca1\t\t# shows status of all ports of 'mthca1'")
		c.echo("\t\t" + prog + " mthca0:2\t# shows status port number 2 of 'mthca0'")
		c.echo("\t\t" + prog + "\t\t# default: shows status of all 'mthca0' ports")
		return errFatal
	}
	if len(args) == 0 || args[0] == "" {
		devs, ok := glob(c.root)
		if !ok {
			return c.fatal("No devices")
		}
		for _, d := range devs {
			if err := c.ibStatus(d, "+"); err != nil {
				return err
			}
		}
		return nil
	}
	for _, a := range args {
		if a == "" { // while [ "$1" ]
			break
		}
		// dev=`echo $1 | sed 's/:.*$//'`, port=`echo $1 | sed 's/^.*://'`
		line := strings.Join(fields(a), " ")
		dev, port := line, line
		if i := strings.IndexByte(line, ':'); i >= 0 {
			dev = line[:i]
		}
		if i := strings.LastIndexByte(line, ':'); i >= 0 {
			port = line[i+1:]
		}
		if port == dev {
			port = "+"
		}
		// ib_status $dev $port: unquoted, so an empty word is no argument.
		words := append(fields(dev), fields(port)...)
		words = append(words, "", "")
		if err := c.ibStatus(words[0], words[1]); err != nil {
			return err
		}
	}
	return nil
}

// echo is the shell's echo of its arguments: joined by spaces, with a
// newline.
func (c *command) echo(args ...string) {
	c.stdout.WriteString(strings.Join(args, " ") + "\n")
}

// fatal is the script's fatal: echo "Fatal error: " $*, exit 255.
func (c *command) fatal(msg string) error {
	c.echo(append([]string{"Fatal error: "}, fields(msg)...)...)
	return errFatal
}

// ibStatus is the script's ib_status: the ports of dev, all of them
// ("+") or those in the list ports.
func (c *command) ibStatus(dev, ports string) error {
	portsDir := c.root + "/" + dev + "/ports"
	if st, err := os.Stat(portsDir); err != nil || !st.IsDir() {
		return c.fatal(fmt.Sprintf("device '%s': sys files not found (%s)", dev, portsDir))
	}
	list := fields(ports)
	if ports == "+" {
		// ports=`(cd "$infiniband_base/$1/ports" 2>/dev/null || fatal No devices; echo *)`
		names, ok := glob(portsDir)
		if !ok {
			names = []string{"Fatal", "error:", "No", "devices"}
		}
		list = names
	}
	for _, p := range list {
		c.portStatus(dev, p)
	}
	return nil
}

// portStatus is the script's port_status.
func (c *command) portStatus(dev, port string) {
	dir := c.root + "/" + dev + "/ports/" + port
	fmt.Fprintf(c.stdout, "Infiniband device '%s' port %s status:\n", dev, port)
	for _, l := range []struct{ label, file, missing string }{
		{"\tdefault gid:\t", "gids/0", "unknown"},
		{"\tbase lid:\t", "lid", "unknown"},
		{"\tsm lid:\t\t", "sm_lid", "unknown"},
		{"\tstate:\t\t", "state", "unknown"},
		{"\tphys state:\t", "phys_state", "unknown"},
		{"\trate:\t\t", "rate", "unknown"},
		{"\tlink_layer:\t", "link_layer", "IB"},
	} {
		c.echo(append([]string{l.label}, fields(c.cat(dir+"/"+l.file, l.missing))...)...)
	}
	c.echo()
}

// cat is `[ -r $f ] && cat $f || echo $missing`: the file's text, or
// missing where it is not readable or cat fails (after what cat has
// printed, and its complaint on stderr).
func (c *command) cat(path, missing string) string {
	if unix.Faccessat(unix.AT_FDCWD, path, unix.R_OK, unix.AT_EACCESS) != nil {
		return missing
	}
	var buf [4096]byte
	n, err := sysfs.ReadRaw(path, buf[:])
	b := buf[:n]
	if err != nil {
		var e unix.Errno
		if errors.As(err, &e) {
			fmt.Fprintf(c.stderr, "cat: %s: %s\n", path, ibsysfs.Strerror(e))
		} else {
			fmt.Fprintf(c.stderr, "cat: %s: %v\n", path, err)
		}
		return string(b) + "\n" + missing
	}
	return string(b)
}

// glob is `cd dir && echo *`: the names in dir not starting with '.',
// sorted, or "*" itself when there are none; false where cd fails.
func glob(dir string) ([]string, bool) {
	if unix.Access(dir, unix.X_OK) != nil {
		return nil, false
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		var e unix.Errno
		if errors.As(err, &e) && e == unix.ENOTDIR || errors.Is(err, os.ErrNotExist) {
			return nil, false
		}
	}
	var names []string
	for _, e := range ents {
		if !strings.HasPrefix(e.Name(), ".") {
			names = append(names, e.Name())
		}
	}
	if len(names) == 0 {
		return []string{"*"}, true
	}
	sort.Strings(names)
	return names, true
}

// fields is the shell's field splitting with the default IFS (space, tab,
// newline).
func fields(s string) []string {
	return strings.FieldsFunc(s, func(r rune) bool { return r == ' ' || r == '\t' || r == '\n' })
}
