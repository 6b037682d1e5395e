package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// fakeModules makes a module tree and a fake modprobe that prints
// --show-depends output for it: rdma_rxe depends on ib_core, ib_core is
// gzip'd, virtio_pci is built in and crc32_generic does not exist.
func fakeModules(t *testing.T) (modprobe, dir string) {
	t.Helper()
	dir = t.TempDir()
	ko := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write([]byte("ib_core module"))
	zw.Close()
	core := ko("ib_core.ko.gz", gz.String())
	rxe := ko("rdma_rxe.ko", "rdma_rxe module")
	other := ko("other.ko", "other module")
	dummy := ko("dummy.ko", "dummy module")
	script := `#!/bin/sh
case "$4" in
crc32_generic) echo "modprobe: FATAL: Module crc32_generic not found in directory /lib/modules/$2" >&2; exit 1 ;;
virtio_pci) echo "builtin virtio_pci" ;;
rdma_rxe|ib_uverbs) echo "insmod ` + core + ` "; echo "insmod ` + rxe + ` " ;;
dummy) echo "insmod ` + dummy + ` numdummies=0 " ;;
*) echo "insmod ` + other + ` " ;;
esac
`
	modprobe = filepath.Join(dir, "modprobe")
	if err := os.WriteFile(modprobe, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return modprobe, dir
}

func TestBuildInitramfs(t *testing.T) {
	modprobe, dir := fakeModules(t)
	bb := filepath.Join(dir, "busybox")
	image := filepath.Join(dir, "vmlinuz")
	for _, p := range []string{bb, image} {
		if err := os.WriteFile(p, []byte("binary "+p), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	tl := &tools{modprobe: modprobe, busybox: bb}
	k := kernel{Release: "6.1.0-57-amd64", Image: image}
	out := t.TempDir()
	path, warnings, err := buildInitramfs(context.Background(), tl, k, out)
	if err != nil {
		t.Fatalf("buildInitramfs: %v", err)
	}
	if len(warnings) != 1 || !strings.Contains(warnings[0], "crc32_generic") {
		t.Errorf("warnings %q, want one about crc32_generic", warnings)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	files := make(map[string]string)
	for _, e := range readCPIO(t, raw) {
		files[e.Name] = e.Data
	}
	rel := strings.TrimPrefix(dir, "/")
	wantList := dir + "/other.ko\n" + dir + "/ib_core.ko\n" + dir + "/rdma_rxe.ko\n" + dir + "/dummy.ko numdummies=0\n"
	for name, want := range map[string]string{
		"init":               initScript,
		"bin/busybox":        "binary " + bb,
		"etc/modules.list":   wantList,
		rel + "/ib_core.ko":  "ib_core module", // decompressed
		rel + "/rdma_rxe.ko": "rdma_rxe module",
		"dev/console":        "",
		"proc":               "",
		"mnt":                "",
	} {
		got, ok := files[name]
		if !ok {
			t.Errorf("initramfs lacks %s", name)
			continue
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", name, diff)
		}
	}

	// Same inputs: the cached file is reused.
	again, _, err := buildInitramfs(context.Background(), tl, k, out)
	if err != nil || again != path {
		t.Errorf("second build: %q, %v; want the cached %q", again, err, path)
	}
}

func TestBuildInitramfsRequiredModuleMissing(t *testing.T) {
	dir := t.TempDir()
	modprobe := filepath.Join(dir, "modprobe")
	script := "#!/bin/sh\necho \"modprobe: FATAL: Module $4 not found\" >&2\nexit 1\n"
	if err := os.WriteFile(modprobe, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	tl := &tools{modprobe: modprobe, busybox: "/nonexistent"}
	_, _, err := buildInitramfs(context.Background(), tl, kernel{Release: "9.9"}, dir)
	if err == nil || !strings.Contains(err.Error(), "module virtio_pci: modprobe: FATAL") {
		t.Errorf("buildInitramfs = %v, want an error about virtio_pci", err)
	}
}
