package main

import (
	"cmp"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// kernel is an installed Debian kernel the guest can boot.
type kernel struct {
	Release string // as in uname -r
	Image   string // /boot/vmlinuz-<release>
}

// rxeModuleGlob is where a kernel's rdma_rxe module lies, relative to
// /lib/modules/<release>; it may be compressed.
const rxeModuleGlob = "kernel/drivers/infiniband/sw/rxe/rdma_rxe.ko*"

// findKernels lists the kernels in bootDir that have rdma_rxe under
// modulesDir, oldest first.
func findKernels(bootDir, modulesDir string) ([]kernel, error) {
	images, err := filepath.Glob(filepath.Join(bootDir, "vmlinuz-*"))
	if err != nil {
		return nil, err
	}
	var ks []kernel
	for _, img := range images {
		rel := strings.TrimPrefix(filepath.Base(img), "vmlinuz-")
		if rel == "" || strings.HasSuffix(rel, ".old") {
			continue
		}
		m, _ := filepath.Glob(filepath.Join(modulesDir, rel, rxeModuleGlob))
		if len(m) == 0 {
			continue
		}
		ks = append(ks, kernel{Release: rel, Image: img})
	}
	slices.SortFunc(ks, func(a, b kernel) int { return compareReleases(a.Release, b.Release) })
	return ks, nil
}

// selectKernels resolves the -kernels flag against the installed kernels:
// "all", or a comma list of releases, each exact or a unique prefix at a
// version boundary ("6.12" matches "6.12.117+deb12-amd64").
func selectKernels(spec string, installed []kernel) ([]kernel, error) {
	if len(installed) == 0 {
		return nil, fmt.Errorf("no kernel with rdma_rxe found in /boot (Debian packages linux-image-amd64 and linux-image-6.12-amd64)")
	}
	if strings.TrimSpace(spec) == "all" {
		return installed, nil
	}
	var out []kernel
	seen := make(map[string]bool)
	for _, want := range strings.Split(spec, ",") {
		want = strings.TrimSpace(want)
		k, err := matchKernel(want, installed)
		if err != nil {
			return nil, err
		}
		if !seen[k.Release] {
			seen[k.Release] = true
			out = append(out, k)
		}
	}
	return out, nil
}

func matchKernel(want string, installed []kernel) (kernel, error) {
	var names []string
	var matches []kernel
	for _, k := range installed {
		names = append(names, k.Release)
		if k.Release == want {
			return k, nil
		}
		if rest, ok := strings.CutPrefix(k.Release, want); ok && want != "" &&
			(rest[0] == '.' || rest[0] == '-' || rest[0] == '+') {
			matches = append(matches, k)
		}
	}
	switch len(matches) {
	case 1:
		return matches[0], nil
	case 0:
		return kernel{}, fmt.Errorf("kernel %q not found with rdma_rxe; installed: %s", want, strings.Join(names, ", "))
	default:
		var m []string
		for _, k := range matches {
			m = append(m, k.Release)
		}
		return kernel{}, fmt.Errorf("kernel %q is ambiguous: %s", want, strings.Join(m, ", "))
	}
}

// compareReleases orders kernel releases by their numeric parts, then as
// strings: "6.1.0-57-amd64" < "6.12.117+deb12-amd64".
func compareReleases(a, b string) int {
	fa, fb := releaseFields(a), releaseFields(b)
	for i := 0; i < len(fa) && i < len(fb); i++ {
		na, ea := strconv.Atoi(fa[i])
		nb, eb := strconv.Atoi(fb[i])
		switch {
		case ea == nil && eb == nil:
			if na != nb {
				return cmp.Compare(na, nb)
			}
		case ea == nil:
			return -1
		case eb == nil:
			return 1
		default:
			if c := strings.Compare(fa[i], fb[i]); c != 0 {
				return c
			}
		}
	}
	return cmp.Compare(len(fa), len(fb))
}

func releaseFields(r string) []string {
	return strings.FieldsFunc(r, func(c rune) bool { return c == '.' || c == '-' || c == '+' })
}

// kernelsDescription is a one-line list of kernels for messages.
func kernelsDescription(ks []kernel) string {
	var s []string
	for _, k := range ks {
		s = append(s, k.Release)
	}
	return strings.Join(s, ", ")
}

// checkKernelFiles checks that the kernel image is readable and depmod has
// run for its modules.
func checkKernelFiles(k kernel, modulesDir string) error {
	f, err := os.Open(k.Image)
	if err != nil {
		return fmt.Errorf("kernel %s: %v", k.Release, err)
	}
	f.Close()
	if _, err := os.Stat(filepath.Join(modulesDir, k.Release, "modules.dep")); err != nil {
		return fmt.Errorf("kernel %s: no modules.dep (run depmod %s): %v", k.Release, k.Release, err)
	}
	return nil
}

// selectSessionKernels picks the kernels of a flag such as -race among
// those of the session: "all" is every one, "none" none, "newest" and
// "oldest" the newest and oldest release, else a comma list as for
// -kernels. flag names the flag in errors.
func selectSessionKernels(flag, spec string, session []kernel) ([]kernel, error) {
	spec = strings.TrimSpace(spec)
	switch spec {
	case "none":
		return nil, nil
	case "all":
		return session, nil
	case "newest", "oldest":
		if len(session) == 0 {
			return nil, nil
		}
		sign := 1
		if spec == "oldest" {
			sign = -1
		}
		pick := session[0]
		for _, k := range session[1:] {
			if sign*compareReleases(k.Release, pick.Release) > 0 {
				pick = k
			}
		}
		return []kernel{pick}, nil
	}
	ks, err := selectKernels(spec, session)
	if err != nil {
		return nil, fmt.Errorf("-%s: %w", flag, err)
	}
	return ks, nil
}
