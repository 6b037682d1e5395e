// Package rdmaep is the engine of cmd/rdma_server and cmd/rdma_client,
// drop-ins for rdma-core's rdma_server and rdma_client
// (librdmacm/examples/rdma_{server,client}.c, v44): one RC connection
// made with librdmacm's synchronous endpoint calls (rdma_getaddrinfo,
// rdma_create_ep, rdma_get_request: rdma.ListenEP, GetRequest, CreateEP)
// over which the client sends 16 bytes and the server answers with 16.
// Same options, output and exit statuses, so either side can be
// rdma-core's.
package rdmaep

import (
	"fmt"
	"io"

	"github.com/rdmastack/rdmastack/cmd/internal/cflags"
	"github.com/rdmastack/rdmastack/cmd/internal/cmnode"
)

const usageFormat = "usage: %s\n\t[-s server_address]\n\t[-p port_number]\n"

// config is a parsed command line: the address (the server binds to it,
// the client connects to it) and the port.
type config struct {
	server, port string
}

// parse reads the command line as both programs' main does (getopt
// "s:p:"); an unknown option prints glibc's complaint and the usage, and
// exits 1.
func parse(prog, server string, stdout, stderr io.Writer, args []string) (*config, error) {
	c := &config{server: server, port: "7471"}
	g := cflags.New(prog, args, "s:p:", nil)
	for g.Next() {
		switch g.Opt() {
		case 's':
			c.server = g.Arg()
		case 'p':
			c.port = g.Arg()
		default:
			return nil, cmnode.UsageExit(stdout, stderr, g.Err(), usageFormat, prog)
		}
	}
	return c, nil
}

// mainOf runs one program: "<name>: start", run's status as "<name>:
// end <n>", which is also the exit status.
func mainOf(name, server string, stdout, stderr io.Writer, args []string, run func(*side) int) error {
	c, err := parse(name, server, stdout, stderr, args)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%s: start\n", name)
	s := &side{name: name, cfg: c, stdout: stdout, stderr: stderr}
	ret := run(s)
	fmt.Fprintf(stdout, "%s: end %d\n", name, ret)
	return cmnode.Return(ret)
}
