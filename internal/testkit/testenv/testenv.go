// Package testenv is what rdmastack's integration tests share: whether
// they run inside the Soft-RoCE VM (test/vm), whether the kernel has RDMA,
// and where the differential-test oracles (iproute2, rdma-core) are.
//
// Outside the VM an integration test skips when there is no RDMA device.
// Inside the VM (RDMASTACK_VM=1) the same condition fails the test: a skip
// there would hide a broken harness.
package testenv

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// InVM reports whether the test runs inside test/vm's guest.
func InVM() bool { return os.Getenv("RDMASTACK_VM") == "1" }

// Skip skips the test outside the VM and fails it inside.
func Skip(t testing.TB, format string, args ...any) {
	t.Helper()
	if InVM() {
		t.Fatalf("inside the VM this must not skip: "+format, args...)
	}
	t.Skipf(format, args...)
}

// RequireRDMA makes the test run only where the kernel has RDMA netlink
// and at least one RDMA device.
func RequireRDMA(t testing.TB) {
	t.Helper()
	fd, err := unix.Socket(unix.AF_NETLINK, unix.SOCK_RAW|unix.SOCK_CLOEXEC, unix.NETLINK_RDMA)
	if err != nil {
		Skip(t, "no RDMA netlink in this kernel: %v", err)
		return
	}
	unix.Close(fd)
	ents, _ := os.ReadDir("/sys/class/infiniband")
	if len(ents) == 0 {
		Skip(t, "no RDMA devices in /sys/class/infiniband")
	}
}

// Oracle returns the path of an external tool used as a test oracle
// (iproute2's rdma, rdma-core's ibv_devinfo, ...), looking in the system
// directories only so that the project's own commands never shadow it.
func Oracle(t testing.TB, name string) string {
	t.Helper()
	for _, dir := range []string{"/usr/sbin", "/usr/bin", "/sbin", "/bin"} {
		p := filepath.Join(dir, name)
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() && st.Mode()&0o111 != 0 {
			return p
		}
	}
	Skip(t, "oracle %s is not installed", name)
	return ""
}

// Run runs an oracle and returns its standard output; a non-zero exit
// fails the test.
func Run(t testing.TB, path string, args ...string) []byte {
	t.Helper()
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(path, args...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %s: %v\nstderr: %s", path, strings.Join(args, " "), err, stderr.String())
	}
	return stdout.Bytes()
}

// KernelRelease is uname -r.
func KernelRelease() string {
	var u unix.Utsname
	if err := unix.Uname(&u); err != nil {
		return "unknown"
	}
	return unix.ByteSliceToString(u.Release[:])
}

// OutDir is a directory whose files the harness brings back to the host
// (RDMASTACK_OUT), or "" outside the VM.
func OutDir() string { return os.Getenv("RDMASTACK_OUT") }

// Iproute2Version returns the version of iproute2's rdma tool as
// [major, minor] (from "rdma utility, iproute2-6.1.0"), so that tests
// can handle the known output differences between versions explicitly.
func Iproute2Version(t testing.TB, rdma string) [2]int {
	t.Helper()
	out := string(Run(t, rdma, "-V"))
	i := strings.Index(out, "iproute2-")
	if i < 0 {
		t.Fatalf("%s -V printed %q: no iproute2 version", rdma, out)
	}
	v := out[i+len("iproute2-"):]
	var major, minor int
	for _, c := range v {
		if c < '0' || c > '9' {
			break
		}
		major = major*10 + int(c-'0')
	}
	if j := strings.IndexByte(v, '.'); j >= 0 {
		for _, c := range v[j+1:] {
			if c < '0' || c > '9' {
				break
			}
			minor = minor*10 + int(c-'0')
		}
	}
	return [2]int{major, minor}
}

// Output runs a tool and returns its standard output and whether it
// exited zero: for comparing how two tools fail. A tool that cannot be
// started fails the test.
func Output(t testing.TB, path string, args ...string) (string, bool) {
	t.Helper()
	var stdout bytes.Buffer
	cmd := exec.Command(path, args...)
	cmd.Stdout = &stdout
	err := cmd.Run()
	if err != nil {
		if _, ok := err.(*exec.ExitError); !ok {
			t.Fatalf("%s %s: %v", path, strings.Join(args, " "), err)
		}
	}
	return stdout.String(), err == nil
}
