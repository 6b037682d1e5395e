package cmtest

import (
	"bufio"
	"fmt"
	"os"
	"strings"
	"time"
)

// WaitTCPListen waits until a TCP socket of the process's network
// namespace listens on port (any address, IPv4 or IPv6), as
// /proc/net/tcp{,6} show it; it opens no connection, so a server that
// serves the first one it accepts is left alone.
func WaitTCPListen(port uint16, d time.Duration) error { return WaitTCPListenOr(port, d, nil) }

// WaitTCPListenOr is WaitTCPListen that also gives up once ended is
// closed: the server ended before it listened.
func WaitTCPListenOr(port uint16, d time.Duration, ended <-chan struct{}) error {
	for deadline := time.Now().Add(d); time.Now().Before(deadline); {
		if TCPListening(port) {
			return nil
		}
		select {
		case <-ended:
			return fmt.Errorf("the server ended before it listened on TCP port %d", port)
		case <-time.After(5 * time.Millisecond):
		}
	}
	return fmt.Errorf("nothing listens on TCP port %d after %v", port, d)
}

// TCPListening reports whether a TCP socket of the process's network
// namespace listens on port now (see WaitTCPListen).
func TCPListening(port uint16) bool {
	want := fmt.Sprintf(":%04X", port)
	for _, f := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		if tcpListens(f, want) {
			return true
		}
	}
	return false
}

// tcpListens reports whether a line of the /proc/net/tcp table f has
// a local address ending in port (":1F2F") and state 0A (LISTEN).
func tcpListens(f, port string) bool {
	file, err := os.Open(f)
	if err != nil {
		return false
	}
	defer file.Close()
	s := bufio.NewScanner(file)
	for s.Scan() {
		fields := strings.Fields(s.Text())
		if len(fields) > 3 && strings.HasSuffix(fields[1], port) && fields[3] == "0A" {
			return true
		}
	}
	return false
}
