// Package launcher is the process-level harness of nativevirt-launcher on the real libvirt and
// QEMU of this machine, without Kubernetes: each test runs the launcher as PID 1 of fresh mount
// and PID namespaces with exactly the capabilities of the launcher pod contract, defines and
// boots the demo guest (TCG) through the launcher's socket, and checks the launcher's life
// follows the guest's. It needs root, libvirt + QEMU (hack/deps/node.list) and builds the
// launcher and the demo disk itself (both cached).
package launcher

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// helperEnv, when set, makes the test binary the namespace helper that execs the launcher named
// by its value (see helperMain).
const helperEnv = "NV_LAUNCHER_HARNESS_EXEC"

var (
	// launcherBin is the launcher built for the tests.
	launcherBin string
	// demoDisk is the demo guest's bootable disk image.
	demoDisk string
	// skipReason says why the tests cannot run here.
	skipReason string
)

func TestMain(m *testing.M) {
	if bin := os.Getenv(helperEnv); bin != "" {
		helperMain(bin, os.Args[1:]) // does not return
	}
	os.Exit(setup(m))
}

func setup(m *testing.M) int {
	if os.Geteuid() != 0 {
		skipReason = "the launcher harness needs root: it runs libvirtd in new mount and PID namespaces"
		fmt.Fprintln(os.Stderr, "launcher harness: SKIP:", skipReason)
		return m.Run()
	}
	for _, p := range []string{"/usr/sbin/libvirtd", "/usr/sbin/virtlogd", "/usr/bin/qemu-system-x86_64"} {
		if _, err := os.Stat(p); err != nil {
			fmt.Fprintf(os.Stderr, "launcher harness: %s missing: run `make deps` (hack/deps/node.list)\n", p)
			return 1
		}
	}
	root, err := moduleRoot()
	if err != nil {
		fmt.Fprintln(os.Stderr, "launcher harness:", err)
		return 1
	}
	tmp, err := os.MkdirTemp("", "nvl-bin")
	if err != nil {
		fmt.Fprintln(os.Stderr, "launcher harness:", err)
		return 1
	}
	defer func() { _ = os.RemoveAll(tmp) }()
	launcherBin = filepath.Join(tmp, "nativevirt-launcher")
	if err := run(root, goTool(), "build", "-o", launcherBin, "./cmd/nativevirt-launcher"); err != nil {
		fmt.Fprintln(os.Stderr, "launcher harness: building the launcher:", err)
		return 1
	}
	if err := run(root, filepath.Join(root, "hack/images/build-demo-disk.sh")); err != nil {
		fmt.Fprintln(os.Stderr, "launcher harness: building the demo disk:", err)
		return 1
	}
	demoDisk = filepath.Join(root, "_output/images/demo-disk/disk.img")
	return m.Run()
}

// run runs a command in dir, its output going to the test's stderr.
func run(dir, name string, args ...string) error {
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Stdout = os.Stderr
	cmd.Stderr = os.Stderr
	return cmd.Run()
}

// goTool is the go command of the toolchain running the tests.
func goTool() string {
	// go test puts the running toolchain's bin directory first in the test's PATH.
	if p, err := exec.LookPath("go"); err == nil {
		return p
	}
	return "go"
}

// moduleRoot walks up from the working directory to the NativeVirt module.
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		data, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err == nil && strings.Contains(string(data), "module github.com/nativevirt/nativevirt\n") {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("not inside the github.com/nativevirt/nativevirt module")
		}
		dir = parent
	}
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// skipIfNeeded skips the test when the harness cannot run here.
func skipIfNeeded(t *testing.T) {
	t.Helper()
	if skipReason != "" {
		t.Skip(skipReason)
	}
}
