package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
)

// module is a Go module test/vm works on: the repository's own, or one
// nested in it (the exporter, whose dependencies stay out of the library's
// go.mod).
type module struct {
	Root string // directory of go.mod
	Path string // module path
	// Base is the repository module's path: test binaries are named
	// relative to it, and its internal/testkit/testenv marks the tests that need
	// the VM. For the repository module it equals Path.
	Base string
}

// goEnv is the environment of every go command: static binaries only, as
// they run in the guest from the host's file system.
func goEnv() []string {
	return append(os.Environ(), "CGO_ENABLED=0")
}

// goOutput runs a go command in dir and returns its standard output.
func goOutput(ctx context.Context, dir string, args ...string) (string, error) {
	var out, errOut bytes.Buffer
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir = dir
	cmd.Env = goEnv()
	cmd.Stdout = &out
	cmd.Stderr = &errOut
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("go %s: %v\n%s", strings.Join(args, " "), err, strings.TrimSpace(errOut.String()))
	}
	return out.String(), nil
}

// goRun runs a go command in dir, streaming its output.
func goRun(ctx context.Context, dir string, stdout, stderr io.Writer, args ...string) error {
	return goRunEnv(ctx, dir, goEnv(), stdout, stderr, args...)
}

// goRunEnv is goRun with the command's environment.
func goRunEnv(ctx context.Context, dir string, env []string, stdout, stderr io.Writer, args ...string) error {
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir = dir
	cmd.Env = env
	cmd.Stdout = stdout
	cmd.Stderr = stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("go %s: %v", strings.Join(args, " "), err)
	}
	return nil
}

// findModule returns the module of the current directory.
func findModule(ctx context.Context) (module, error) {
	out, err := goOutput(ctx, "", "list", "-m", "-f", "{{.Dir}}\t{{.Path}}")
	if err != nil {
		return module{}, err
	}
	dir, path, ok := strings.Cut(strings.TrimSpace(out), "\t")
	if !ok || dir == "" {
		return module{}, fmt.Errorf("not inside a Go module: go list -m printed %q", out)
	}
	return module{Root: dir, Path: path, Base: path}, nil
}

// findModules returns the module of the current directory and, after it,
// the modules nested in its tree (see nestedModules).
func findModules(ctx context.Context) ([]module, error) {
	root, err := findModule(ctx)
	if err != nil {
		return nil, err
	}
	nested, err := nestedModules(root)
	if err != nil {
		return nil, err
	}
	return append([]module{root}, nested...), nil
}

// nestedModules returns the modules nested in root's tree: the outermost
// directories below it with a go.mod, outside testdata and hidden
// directories, in path order, each named by its go.mod's module line.
func nestedModules(root module) ([]module, error) {
	var mods []module
	err := filepath.WalkDir(root.Root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() || p == root.Root {
			return nil
		}
		if name := d.Name(); name == "testdata" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") {
			return filepath.SkipDir
		}
		b, err := os.ReadFile(filepath.Join(p, "go.mod"))
		if errors.Is(err, os.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		path := modulePath(b)
		if path == "" {
			return fmt.Errorf("%s: no module line", filepath.Join(p, "go.mod"))
		}
		mods = append(mods, module{Root: p, Path: path, Base: root.Path})
		return filepath.SkipDir
	})
	return mods, err
}

// modulePath is the path a go.mod's module line names ("" if none).
func modulePath(gomod []byte) string {
	for _, l := range strings.Split(string(gomod), "\n") {
		l, _, _ = strings.Cut(l, "//")
		if rest, ok := strings.CutPrefix(strings.TrimSpace(l), "module"); ok && (rest == "" || rest[0] == ' ' || rest[0] == '\t') {
			return strings.Trim(strings.TrimSpace(rest), `"`+"`")
		}
	}
	return ""
}

// buildCommands builds every main package under ./cmd/... into binDir and
// returns their import paths; none is fine.
func buildCommands(ctx context.Context, m module, binDir string, log io.Writer) ([]string, error) {
	if fi, err := os.Stat(filepath.Join(m.Root, "cmd")); err != nil || !fi.IsDir() {
		return nil, nil
	}
	out, err := goOutput(ctx, m.Root, "list", "-f", `{{if eq .Name "main"}}{{.ImportPath}}{{end}}`, "./cmd/...")
	if err != nil {
		return nil, err
	}
	mains := strings.Fields(out)
	if len(mains) == 0 {
		return nil, nil
	}
	if err := os.MkdirAll(binDir, 0o755); err != nil {
		return nil, err
	}
	args := append([]string{"build", "-o", binDir + string(filepath.Separator)}, mains...)
	fmt.Fprintf(log, "vm: CGO_ENABLED=0 go %s\n", strings.Join(args, " "))
	if err := goRun(ctx, m.Root, log, log, args...); err != nil {
		return nil, err
	}
	return mains, nil
}

// testPackage is a package of the module with test files.
type testPackage struct {
	ImportPath string
	Dir        string
}

// listTestPackages lists the module's packages that have test files.
func listTestPackages(ctx context.Context, m module) ([]testPackage, error) {
	out, err := goOutput(ctx, m.Root, "list", "-f", "{{.ImportPath}}\t{{.Dir}}\t{{len .TestGoFiles}}\t{{len .XTestGoFiles}}", "./...")
	if err != nil {
		return nil, err
	}
	return parseTestPackages(out)
}

// parseTestPackages parses the go list lines of listTestPackages.
func parseTestPackages(out string) ([]testPackage, error) {
	var pkgs []testPackage
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		if strings.TrimSpace(sc.Text()) == "" {
			continue
		}
		f := strings.Split(sc.Text(), "\t")
		if len(f) != 4 {
			return nil, fmt.Errorf("unexpected go list line %q", sc.Text())
		}
		nt, err1 := strconv.Atoi(f[2])
		nx, err2 := strconv.Atoi(f[3])
		if err1 != nil || err2 != nil {
			return nil, fmt.Errorf("unexpected go list line %q", sc.Text())
		}
		if nt+nx > 0 {
			pkgs = append(pkgs, testPackage{ImportPath: f[0], Dir: f[1]})
		}
	}
	return pkgs, nil
}

// testBinaryName names a package's test binary after its import path
// relative to the module, with slashes replaced: "nldev/internal/abi"
// becomes "nldev_internal_abi"; the root package takes the module's last
// path element.
func testBinaryName(modulePath, importPath string) string {
	rel, ok := strings.CutPrefix(importPath, modulePath+"/")
	if !ok {
		if importPath == modulePath {
			rel = modulePath[strings.LastIndex(modulePath, "/")+1:]
		} else {
			rel = importPath
		}
	}
	return strings.ReplaceAll(rel, "/", "_")
}

// buildTestBinaries builds each package's test binary into dir, which the
// guest sees as /tmp/vm/tests.
func buildTestBinaries(ctx context.Context, m module, pkgs []testPackage, dir string, log io.Writer) ([]testBinary, error) {
	return buildBinaries(ctx, m, pkgs, dir, false, log)
}

// buildRaceTestBinaries builds, with the race detector, the test binary of
// each package whose tests meet the kernel in the guest (they import the
// module's internal/testkit/testenv) into dir. The race detector needs cgo: these
// binaries link the host's C library dynamically, which the guest has,
// since it runs the host's root. Only test binaries are built so; the
// commands stay static.
func buildRaceTestBinaries(ctx context.Context, m module, pkgs []testPackage, dir string, log io.Writer) ([]testBinary, error) {
	if _, err := exec.LookPath("gcc"); err != nil {
		return nil, fmt.Errorf("the race run needs a C compiler: apt-get install -y gcc (or -race=none)")
	}
	var with []testPackage
	for _, p := range pkgs {
		ok, err := usesTestenv(p.Dir, m.Base)
		if err != nil {
			return nil, err
		}
		if ok {
			with = append(with, p)
		}
	}
	return buildBinaries(ctx, m, with, dir, true, log)
}

// usesTestenv reports whether a test file in dir imports the module's
// internal/testkit/testenv, the gate of every test that needs the VM.
func usesTestenv(dir, modulePath string) (bool, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*_test.go"))
	if err != nil {
		return false, err
	}
	imp := []byte(strconv.Quote(modulePath + "/internal/testkit/testenv"))
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return false, err
		}
		if bytes.Contains(b, imp) {
			return true, nil
		}
	}
	return false, nil
}

// buildBinaries builds each package's test binary into dir, static or, with
// race, with the race detector; the guest sees dir under /tmp/vm.
func buildBinaries(ctx context.Context, m module, pkgs []testPackage, dir string, race bool, log io.Writer) ([]testBinary, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	env, args, cgo := goEnv(), []string{"test", "-c"}, "0"
	if race {
		env, args, cgo = append(os.Environ(), "CGO_ENABLED=1"), append(args, "-race"), "1"
	}
	var bins []testBinary
	for _, p := range pkgs {
		name := testBinaryName(m.Base, p.ImportPath)
		out := filepath.Join(dir, name+".test")
		cmd := append(append([]string(nil), args...), "-o", out, p.ImportPath)
		fmt.Fprintf(log, "vm: CGO_ENABLED=%s go %s\n", cgo, strings.Join(cmd, " "))
		if err := goRunEnv(ctx, m.Root, env, log, log, cmd...); err != nil {
			return nil, err
		}
		if _, err := os.Stat(out); err != nil {
			// go test -c writes nothing for a package without tests to run.
			fmt.Fprintf(log, "vm: %s: no test binary, skipped\n", p.ImportPath)
			continue
		}
		bins = append(bins, testBinary{
			Name:       name,
			ImportPath: p.ImportPath,
			HostPath:   out,
			SourceDir:  p.Dir,
			GuestPath:  guestWork + "/" + filepath.Base(dir) + "/" + name + ".test",
		})
	}
	return bins, nil
}

// racePackages are the packages whose unit tests run under the race
// detector on the host: all of them. The race detector needs cgo, so race
// builds (these and the VM's race test binaries) are the one place a C
// compiler is used; the project and its commands stay cgo-free.
var racePackages = []string{"./..."}

// raceTests runs go test -race on racePackages of the module in dir.
func raceTests(ctx context.Context, dir string, stdout, stderr io.Writer) error {
	if _, err := exec.LookPath("gcc"); err != nil {
		return fmt.Errorf("go test -race needs a C compiler: apt-get install -y gcc")
	}
	fmt.Fprintf(stderr, "vm: CGO_ENABLED=1 go test -race %s\n", strings.Join(racePackages, " "))
	cmd := exec.CommandContext(ctx, "go", append([]string{"test", "-race"}, racePackages...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "CGO_ENABLED=1")
	cmd.Stdout, cmd.Stderr = stdout, stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("race tests failed: %v", err)
	}
	return nil
}
