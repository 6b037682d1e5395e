// Package rcopy is the engine of cmd/rcopy, a drop-in for librdmacm's
// rcopy (v44): copy a file to a server over rsockets, with the same
// command line, messages (header.go), output and exit statuses.
//
// "rcopy [-p port]" is the server: it accepts one client at a time, for
// ever, and serves its open, write and close requests. "rcopy source
// server[:destination] [-p port]" is the client: it opens the
// destination (the source's name by default) with the source's mode,
// sends the file in one write request, closes it and prints the rate.
package rcopy

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/rdmastack/rdmastack/cmd/internal/cflags"
	"github.com/rdmastack/rdmastack/cmd/internal/cmnode"
	"github.com/rdmastack/rdmastack/cmd/internal/rsock"
)

const usage = `usage 1: %[1]s [options]
	     starts the server application
	[-p  port_number]
usage 2: %[1]s source server[:destination] [options]
	     source - file name and path
	     server - name or address
	     destination - file name and path
	[-p  port_number]
`

// Main runs rcopy with args (argv[1:]) over rsockets; prog is argv[0].
// The server runs until it fails.
func Main(prog string, stdout, stderr io.Writer, args []string) error {
	return Run(context.Background(), rsock.RDMA, prog, stdout, stderr, args)
}

// Run is Main over nw; a server also ends, with ctx's error, when ctx
// is done.
func Run(ctx context.Context, nw rsock.Network, prog string, stdout, stderr io.Writer, args []string) error {
	p := &program{nw: nw, stdout: stdout, stderr: stderr, port: "7427"}
	server := len(args) == 0 || (args[0] != "" && args[0][0] == '-')
	if !server {
		if len(args) < 2 {
			return cmnode.UsageExit(stdout, stderr, nil, usage, prog)
		}
		// Positional, as rcopy takes argv[1] and argv[2].
		p.src = args[0]
		p.dst, p.dstFile = splitServer(args[1], args[0])
	}
	g := cflags.New(prog, args, "p:", nil)
	for g.Next() {
		if g.Opt() != 'p' {
			return cmnode.UsageExit(stdout, stderr, g.Err(), usage, prog)
		}
		p.port = g.Arg()
	}
	if server {
		return p.server(ctx)
	}
	return cmnode.Return(p.client(ctx))
}

// splitServer splits "server[:destination]" at its first colon, as
// rcopy does (so an IPv6 address cannot be given); the destination is
// src without one.
func splitServer(arg, src string) (server, dst string) {
	if i := strings.IndexByte(arg, ':'); i >= 0 {
		return arg[:i], arg[i+1:]
	}
	return arg, src
}

// program is one run's options and state.
type program struct {
	nw                rsock.Network
	stdout, stderr    io.Writer
	port              string
	src, dst, dstFile string // the client's source, server and destination
}

// lookupFailed prints a failed getaddrinfo as rcopy does and returns
// its code.
func (p *program) lookupFailed(err error) int {
	var le *cmnode.LookupError
	if errors.As(err, &le) {
		fmt.Fprintf(p.stdout, "getaddrinfo failed: %s\n", le.Text)
		return le.Code
	}
	fmt.Fprintf(p.stdout, "getaddrinfo failed: %v\n", err)
	return -1
}

// perror prints perror(what)'s line for err.
func (p *program) perror(what string, err error) {
	fmt.Fprintln(p.stderr, rsock.Perror(what, err))
}

// status is the errno of err as a response's status (EIO where err
// has none).
func status(err error) uint32 {
	if en, ok := rsock.Errno(err); ok {
		return uint32(en)
	}
	return uint32(unix.EIO)
}
