package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"
)

// Debian builds its kernels without CONFIG_RDMA_SIW, so test/vm builds
// Soft-iWARP's siw.ko out of tree for each guest kernel, from Debian's own
// linux-headers-<release> and the siw sources of the matching
// linux-source-X.Y, and keeps the stripped module in siwCacheDir: the
// sources' .deb is ~150 MB a kernel, the module ~300 KiB.

// siwCacheDir keeps the built modules between runs, one per kernel release,
// kernel package version and revision of test/vm's fix to the module
// (siwpatch.go): siwCacheDir/<release>/<version>+<siwPatchTag>/siw.ko.
const siwCacheDir = "/var/cache/rdmastack-vm/siw"

// siwSourceDir is siw's directory in the kernel's source tree.
const siwSourceDir = "drivers/infiniband/sw/siw"

// noSourceUpgrades keeps apt-get from upgrading the installed packages built
// from the same source as the headers (bookworm's apt otherwise upgrades
// linux-libc-dev with them).
var noSourceUpgrades = []string{"-o", "APT::Get::Upgrade-By-Source-Package=false"}

// siwModule is the built siw.ko of one kernel.
type siwModule struct {
	Release string // uname -r
	Version string // the Debian version of linux-image-<release>
}

// headersPackage is the Debian package of the kernel's build tree.
func (m siwModule) headersPackage() string { return "linux-headers-" + m.Release }

// sourcePackage is the Debian package of the kernel's sources, pinned to the
// kernel's version: "linux-source-6.12=6.12.118-1~deb12u1".
func (m siwModule) sourcePackage() (string, error) {
	series, err := kernelSeries(m.Release)
	if err != nil {
		return "", err
	}
	return "linux-source-" + series + "=" + m.Version, nil
}

// cachePath is where the stripped module lies under cache.
func (m siwModule) cachePath(cache string) string {
	return filepath.Join(cache, m.Release, m.Version+"+"+siwPatchTag, "siw.ko")
}

// kernelSeries is a release's "X.Y": "6.1.0-57-amd64" is 6.1.
func kernelSeries(release string) (string, error) {
	f := strings.SplitN(release, ".", 3)
	if len(f) < 3 || f[0] == "" {
		return "", fmt.Errorf("kernel release %q: want X.Y.Z...", release)
	}
	minor := f[1]
	if i := strings.IndexAny(minor, "-+"); i >= 0 {
		minor = minor[:i]
	}
	return f[0] + "." + minor, nil
}

// sourceMember is the tarball's path in the linux-source .deb, and
// siwMember siw's directory in that tarball.
func sourceMember(series string) string { return "./usr/src/linux-source-" + series + ".tar.xz" }
func siwMember(series string) string    { return "linux-source-" + series + "/" + siwSourceDir }

// extractScript pulls siw's sources out of the linux-source .deb ($1) into
// the working directory, without writing the kernel's tarball to disk.
const extractScript = `dpkg-deb --fsys-tarfile "$1" | tar -xOf - "$2" | tar -xJf - "$3"`

// makeArgs are make's arguments that build siw.ko in dir for release.
func makeArgs(release, dir string, jobs int) []string {
	return []string{"-j" + fmt.Sprint(jobs), "-C", filepath.Join(modulesDir, release, "build"),
		"M=" + dir, "CONFIG_RDMA_SIW=m", "modules"}
}

// ensureSIW returns the path of k's siw.ko, building it (and installing the
// kernel's headers) when the cache has none for k's package version.
func ensureSIW(ctx context.Context, k kernel, install bool, log io.Writer) (string, error) {
	version, err := packageVersion(ctx, "linux-image-"+k.Release)
	if err != nil {
		return "", fmt.Errorf("siw for %s: %w", k.Release, err)
	}
	m := siwModule{Release: k.Release, Version: version}
	path := m.cachePath(siwCacheDir)
	if _, err := os.Stat(path); err == nil {
		return path, nil
	}
	start := time.Now()
	if err := m.build(ctx, path, install, log); err != nil {
		return "", fmt.Errorf("build siw.ko for %s: %w", k.Release, err)
	}
	fmt.Fprintf(log, "vm: built siw.ko for %s in %s (cached as %s)\n", k.Release, seconds(time.Since(start)), path)
	return path, nil
}

// packageVersion is dpkg's version of an installed package.
func packageVersion(ctx context.Context, pkg string) (string, error) {
	out, err := exec.CommandContext(ctx, "dpkg-query", "-W", "-f=${Version}", pkg).Output()
	if err != nil {
		return "", fmt.Errorf("dpkg-query %s: %v", pkg, err)
	}
	v := strings.TrimSpace(string(out))
	if v == "" {
		return "", fmt.Errorf("dpkg-query %s: no version", pkg)
	}
	return v, nil
}

// build builds m's siw.ko into path: the headers installed if missing, the
// sources downloaded into a scratch directory next to path, which goes
// once the module is in place.
func (m siwModule) build(ctx context.Context, path string, install bool, log io.Writer) error {
	if err := m.installHeaders(ctx, install, log); err != nil {
		return err
	}
	src, err := m.sourcePackage()
	if err != nil {
		return err
	}
	series, _ := kernelSeries(m.Release)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	scratch, err := os.MkdirTemp(filepath.Dir(path), "build-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(scratch)

	// apt-get download writes into its working directory; as root it warns
	// that it cannot drop to the _apt user there, which is harmless.
	fmt.Fprintf(log, "vm: apt-get download %s\n", src)
	if err := runIn(ctx, scratch, log, "apt-get", "download", "-q", src); err != nil {
		// The package lists may predate the kernel's version.
		if err := runIn(ctx, scratch, log, "apt-get", "update", "-q"); err != nil {
			return err
		}
		if err := runIn(ctx, scratch, log, "apt-get", "download", "-q", src); err != nil {
			return err
		}
	}
	debs, _ := filepath.Glob(filepath.Join(scratch, "linux-source-*.deb"))
	if len(debs) != 1 {
		return fmt.Errorf("apt-get download %s: want one .deb, found %d", src, len(debs))
	}
	if err := runIn(ctx, scratch, log, "sh", "-c", extractScript, "sh", debs[0], sourceMember(series), siwMember(series)); err != nil {
		return fmt.Errorf("extract %s from %s: %w", siwMember(series), filepath.Base(debs[0]), err)
	}
	dir := filepath.Join(scratch, siwMember(series))
	if err := patchSIWSource(dir); err != nil {
		return err
	}
	if err := runIn(ctx, scratch, log, "make", makeArgs(m.Release, dir, runtime.NumCPU())...); err != nil {
		return err
	}
	ko := filepath.Join(dir, "siw.ko")
	if err := runIn(ctx, scratch, log, "strip", "--strip-debug", ko); err != nil {
		return err
	}
	// Rename within one file system: a concurrent run sees the whole module
	// or none.
	return os.Rename(ko, path)
}

// installHeaders installs linux-headers-<release> (it brings the compiler)
// and make when they are missing.
func (m siwModule) installHeaders(ctx context.Context, install bool, log io.Writer) error {
	missing, err := missingPackages(ctx, []string{m.headersPackage(), "make"})
	if err != nil || len(missing) == 0 {
		return err
	}
	cmd := "apt-get install -y --no-install-recommends " + strings.Join(append(noSourceUpgrades, missing...), " ")
	switch {
	case !install:
		return fmt.Errorf("missing Debian packages %s (-install=false); install them with: %s", strings.Join(missing, " "), cmd)
	case os.Geteuid() != 0:
		return fmt.Errorf("missing Debian packages %s and not root; install them with: sudo %s", strings.Join(missing, " "), cmd)
	}
	return installPackages(ctx, append(noSourceUpgrades, missing...), log)
}

// runIn runs a command in dir, its output going to log only when it fails.
func runIn(ctx context.Context, dir string, log io.Writer, name string, args ...string) error {
	var out bytes.Buffer
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		log.Write(out.Bytes())
		return fmt.Errorf("%s %s: %w", name, strings.Join(args, " "), err)
	}
	return nil
}
