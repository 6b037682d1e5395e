package main

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strings"
)

// guestModule is a kernel module the guest loads, with its dependencies.
type guestModule struct {
	name     string
	required bool   // the guest cannot work without it
	args     string // parameters added to modprobe.d's, if any
}

// guestModules are loaded in this order by the guest's /init.
var guestModules = []guestModule{
	// rxe allocates a "crc32" crypto transform: without crc32_generic,
	// "rdma link add ... type rxe" fails with ENOENT. Some kernels may name
	// it differently or build it in; the guest's device setup catches that.
	{"crc32_generic", false, ""},
	{"virtio_pci", true, ""},
	{"virtio_net", false, ""},
	// e1000, the wire's NIC by default (test/vm -wire-nic).
	{"e1000", false, ""},
	{"9pnet_virtio", true, ""},
	{"9p", true, ""},
	{"rdma_rxe", true, ""},
	{"ib_uverbs", true, ""},
	{"rdma_ucm", false, ""},
	{"ib_umad", false, ""},
	{"veth", true, ""},
	{"dummy", false, ""},
	// nlmon, the netlink tap through which tests capture the requests
	// iproute2 sends (testenv.CaptureNetlink).
	{"nlmon", false, ""},
	// netem, for the fault injection of wire tests (tc qdisc ... netem).
	{"sch_netem", false, ""},
	// The uppers device's tests stack on a port's netdev (ip link add
	// ... type vlan, macvlan, bond); bonding makes no bond0 of its own.
	{"8021q", false, ""},
	{"macvlan", false, ""},
	{"bonding", false, "max_bonds=0"},
}

// moduleLoad is one insmod line of modprobe --show-depends.
type moduleLoad struct {
	Path string // absolute path of the .ko file on the host, maybe compressed
	Args string // module parameters from modprobe.d, if any
}

// resolveModules computes the ordered, deduplicated insmod list of the
// guest modules for a kernel, then of the out-of-tree modules extra (paths
// of .ko files, such as siw.ko), each after its dependencies. Warnings name
// optional modules not found.
func resolveModules(ctx context.Context, modprobe, release string, extra ...string) (loads []moduleLoad, warnings []string, err error) {
	mods := slices.Clone(guestModules)
	for _, path := range extra {
		deps, err := moduleDepends(ctx, path)
		if err != nil {
			return nil, nil, err
		}
		for _, d := range deps {
			mods = append(mods, guestModule{d, true, ""})
		}
	}
	seen := make(map[string]bool)
	for _, m := range mods {
		var out, errOut bytes.Buffer
		cmd := exec.CommandContext(ctx, modprobe, "-S", release, "--show-depends", m.name)
		cmd.Stdout = &out
		cmd.Stderr = &errOut
		if err := cmd.Run(); err != nil {
			if ctx.Err() != nil {
				return nil, nil, ctx.Err()
			}
			msg := strings.TrimSpace(errOut.String())
			if msg == "" {
				msg = err.Error()
			}
			if m.required {
				return nil, nil, fmt.Errorf("kernel %s: module %s: %s", release, m.name, msg)
			}
			warnings = append(warnings, fmt.Sprintf("kernel %s: optional module %s not loaded: %s", release, m.name, msg))
			continue
		}
		ls, _ := parseShowDepends(out.String())
		if m.args != "" && len(ls) > 0 && !strings.Contains(ls[len(ls)-1].Args, m.args) {
			// The module itself is the last line, after its dependencies.
			last := &ls[len(ls)-1]
			last.Args = strings.TrimSpace(last.Args + " " + m.args)
		}
		for _, l := range ls {
			if !seen[l.Path] {
				seen[l.Path] = true
				loads = append(loads, l)
			}
		}
	}
	for _, path := range extra {
		loads = append(loads, moduleLoad{Path: path})
	}
	return loads, warnings, nil
}

// moduleDepends is the "depends" field of a .ko file's modinfo: the modules
// it needs loaded first.
func moduleDepends(ctx context.Context, path string) ([]string, error) {
	modinfo, err := lookTool("modinfo", "kmod")
	if err != nil {
		return nil, err
	}
	out, err := exec.CommandContext(ctx, modinfo, "-F", "depends", path).Output()
	if err != nil {
		return nil, fmt.Errorf("modinfo -F depends %s: %v", path, err)
	}
	return parseDepends(string(out)), nil
}

// parseDepends splits modinfo's "ib_core,libcrc32c" into module names.
func parseDepends(out string) []string {
	var deps []string
	for _, d := range strings.Split(strings.TrimSpace(out), ",") {
		if d = strings.TrimSpace(d); d != "" {
			deps = append(deps, d)
		}
	}
	return deps
}

// parseShowDepends parses the output of modprobe --show-depends: lines
// "insmod PATH [ARGS...]" in load order, and "builtin NAME" for modules built
// into the kernel.
func parseShowDepends(out string) (loads []moduleLoad, builtin []string) {
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 2 {
			continue
		}
		switch f[0] {
		case "insmod":
			loads = append(loads, moduleLoad{Path: f[1], Args: strings.Join(f[2:], " ")})
		case "builtin":
			builtin = append(builtin, f[1])
		}
	}
	return loads, builtin
}

// guestModulePath is where a module lies in the initramfs: its host path
// without a compression suffix.
func guestModulePath(hostPath string) string {
	for _, ext := range []string{".xz", ".zst", ".gz"} {
		if p, ok := strings.CutSuffix(hostPath, ext); ok {
			return p
		}
	}
	return hostPath
}

// readModule returns the uncompressed contents of a .ko, .ko.gz, .ko.xz or
// .ko.zst file. The guest's busybox insmod then needs no decompressor.
func readModule(ctx context.Context, path string) ([]byte, error) {
	switch {
	case strings.HasSuffix(path, ".gz"):
		f, err := os.Open(path)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		zr, err := gzip.NewReader(f)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", path, err)
		}
		return io.ReadAll(zr)
	case strings.HasSuffix(path, ".xz"):
		return decompressWith(ctx, "xz", "xz-utils", path)
	case strings.HasSuffix(path, ".zst"):
		return decompressWith(ctx, "zstd", "zstd", path)
	default:
		return os.ReadFile(path)
	}
}

func decompressWith(ctx context.Context, tool, pkg, path string) ([]byte, error) {
	bin, err := lookTool(tool, pkg)
	if err != nil {
		return nil, fmt.Errorf("decompress %s: %v", path, err)
	}
	var out, errOut bytes.Buffer
	cmd := exec.CommandContext(ctx, bin, "-dc", "--", path)
	cmd.Stdout = &out
	cmd.Stderr = &errOut
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("%s -dc %s: %v: %s", tool, path, err, strings.TrimSpace(errOut.String()))
	}
	return out.Bytes(), nil
}
