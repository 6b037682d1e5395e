package main

import (
	"bufio"
	"bytes"
	"context"
	"debug/elf"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
)

// debPackages are the Debian packages test/vm needs on the host. Their
// recommendations are not needed (qemu-system-x86 would pull in a GTK GUI).
var debPackages = []string{
	"qemu-system-x86",        // qemu-system-x86_64, seabios
	"linux-image-amd64",      // the distribution kernel: 6.1 on bookworm
	"linux-image-6.12-amd64", // the second kernel of the matrix
	"busybox-static",         // /bin/busybox, the initramfs userland
	"kmod",                   // modprobe --show-depends
	"xz-utils",               // 6.12's modules are shipped as .ko.xz
	"gcc",                    // only for the race builds: go test -race on the host, race test binaries for the guest
	"util-linux",             // setpriv, to run commands without CAP_NET_ADMIN
	"python3",                // ctypes, to time librdmacm itself in benchmarks
	"iproute2",               // ip and rdma, used to set the guest up
	"strace",                 // reads the RDMA netlink requests iproute2 sends, which nlmon cannot tap
	"rdma-core",              // the rest is for differential checks in the guest
	"ibverbs-utils",
	"ibverbs-providers",
	"rdmacm-utils",
	"perftest",
	"infiniband-diags",         // ibstat and ibstatus, the oracles of cmd/ibstat and cmd/ibstatus
	"prometheus",               // the exporter's tests: a real Prometheus scrapes it; promtool checks its output
	"prometheus-node-exporter", // the exporter's oracle: node_exporter's infiniband collector
}

// busyboxPath is where busybox-static installs its binary.
const busyboxPath = "/bin/busybox"

// tools are the host's programs and files that test/vm uses.
type tools struct {
	qemu     string // qemu-system-x86_64
	modprobe string // for --show-depends
	busybox  string // static, copied into the initramfs
}

// ensurePrereqs checks the Debian packages, installs missing ones if allowed
// and returns the host tools to use.
func ensurePrereqs(ctx context.Context, o *options, log io.Writer) (*tools, error) {
	missing, err := missingPackages(ctx, debPackages)
	if err != nil {
		return nil, err
	}
	if len(missing) > 0 {
		install := "apt-get install -y --no-install-recommends " + strings.Join(missing, " ")
		switch {
		case !o.install:
			return nil, fmt.Errorf("missing Debian packages %s (-install=false); install them with: %s",
				strings.Join(missing, " "), install)
		case os.Geteuid() != 0:
			return nil, fmt.Errorf("missing Debian packages %s and not root; install them with: sudo %s",
				strings.Join(missing, " "), install)
		}
		fmt.Fprintf(log, "vm: installing %s\n", strings.Join(missing, " "))
		if err := installPackages(ctx, missing, log); err != nil {
			return nil, err
		}
		if still, err := missingPackages(ctx, debPackages); err != nil {
			return nil, err
		} else if len(still) > 0 {
			return nil, fmt.Errorf("still missing after apt-get install: %s", strings.Join(still, " "))
		}
	}

	t := &tools{busybox: busyboxPath}
	if t.qemu, err = lookTool("qemu-system-x86_64", "qemu-system-x86"); err != nil {
		return nil, err
	}
	if t.modprobe, err = lookTool("modprobe", "kmod"); err != nil {
		return nil, err
	}
	if err := checkStatic(t.busybox); err != nil {
		return nil, fmt.Errorf("%v (want the busybox-static package)", err)
	}
	return t, nil
}

// missingPackages returns those of pkgs that dpkg does not list as installed.
func missingPackages(ctx context.Context, pkgs []string) ([]string, error) {
	if _, err := exec.LookPath("dpkg-query"); err != nil {
		return nil, errors.New("dpkg-query not found: test/vm needs a Debian host (bookworm) for its kernels and tools")
	}
	args := append([]string{"-W", "-f=${Package}\t${Status}\n"}, pkgs...)
	var out bytes.Buffer
	cmd := exec.CommandContext(ctx, "dpkg-query", args...)
	cmd.Stdout = &out
	// dpkg-query exits 1 and complains on stderr about unknown packages;
	// those are simply not in its output.
	_ = cmd.Run()
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	return parseDpkgStatus(out.String(), pkgs), nil
}

// parseDpkgStatus parses "package<TAB>status" lines from dpkg-query and
// returns the packages of want that are not "install ok installed".
func parseDpkgStatus(out string, want []string) []string {
	installed := make(map[string]bool)
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		name, status, ok := strings.Cut(sc.Text(), "\t")
		if ok && strings.HasSuffix(strings.TrimSpace(status), " installed") &&
			strings.HasPrefix(status, "install ") {
			installed[name] = true
		}
	}
	var missing []string
	for _, p := range want {
		if !installed[p] {
			missing = append(missing, p)
		}
	}
	return missing
}

// installPackages runs apt-get install, after apt-get update when the
// package lists are missing or the first attempt fails.
func installPackages(ctx context.Context, pkgs []string, log io.Writer) error {
	env := append(os.Environ(), "DEBIAN_FRONTEND=noninteractive")
	if !bootsFromBoot() {
		// Nothing boots the kernels installed here, so skip building a
		// Debian initramfs for each of them (it takes a minute or so).
		env = append(env, "INITRD=No")
		if slices.ContainsFunc(pkgs, func(p string) bool { return strings.HasPrefix(p, "linux-image-") }) {
			fmt.Fprintln(log, "vm: this host does not boot from /boot: installing kernels with INITRD=No")
		}
	}
	apt := func(args ...string) error {
		fmt.Fprintf(log, "vm: apt-get %s\n", strings.Join(args, " "))
		// Wait for another apt or dpkg run rather than fail on its lock.
		cmd := exec.CommandContext(ctx, "apt-get", append([]string{"-o", "DPkg::Lock::Timeout=600"}, args...)...)
		cmd.Env = env
		cmd.Stdout = log
		cmd.Stderr = log
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("apt-get %s: %w", args[0], err)
		}
		return nil
	}
	install := append([]string{"install", "-y", "-q", "--no-install-recommends"}, pkgs...)
	if !haveAptLists() {
		if err := apt("update", "-q"); err != nil {
			return err
		}
		return apt(install...)
	}
	if err := apt(install...); err == nil {
		return nil
	}
	if err := apt("update", "-q"); err != nil {
		return err
	}
	return apt(install...)
}

// haveAptLists reports whether apt has package lists to install from.
func haveAptLists() bool {
	m, _ := filepath.Glob("/var/lib/apt/lists/*_Packages*")
	return len(m) > 0
}

// bootsFromBoot reports whether this host may boot one of the kernels in
// /boot: it runs one of them, or has a boot loader there.
func bootsFromBoot() bool {
	if rel, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		if _, err := os.Stat("/boot/vmlinuz-" + strings.TrimSpace(string(rel))); err == nil {
			return true
		}
	}
	for _, p := range []string{"/boot/grub", "/boot/efi/EFI", "/boot/loader", "/boot/extlinux"} {
		if _, err := os.Stat(p); err == nil {
			return true
		}
	}
	return false
}

// lookTool finds a command in PATH or the sbin directories.
func lookTool(name, pkg string) (string, error) {
	if p, err := exec.LookPath(name); err == nil {
		return p, nil
	}
	for _, dir := range []string{"/usr/sbin", "/sbin", "/usr/bin", "/bin"} {
		p := filepath.Join(dir, name)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", fmt.Errorf("%s not found (Debian package %s)", name, pkg)
}

// checkStatic returns an error unless path is a statically linked ELF
// executable: it runs in the initramfs, where there is no dynamic loader.
func checkStatic(path string) error {
	f, err := elf.Open(path)
	if err != nil {
		return fmt.Errorf("%s: %v", path, err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			return fmt.Errorf("%s is dynamically linked", path)
		}
	}
	return nil
}
