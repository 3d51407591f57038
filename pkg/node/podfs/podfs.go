// Package podfs reaches a launcher pod's emptyDir volumes from the node agent,
// through the kubelet's pod directory on the host:
//
//	<kubelet-root>/pods/<pod uid>/volumes/kubernetes.io~empty-dir/<volume>/
//
// Those paths can be longer than the 108 bytes a unix socket path may have, so
// a directory is opened once and files below it are named through the agent's
// own file descriptor table (/proc/self/fd/<n>/...), which stays short.
package podfs

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"k8s.io/apimachinery/pkg/types"
)

// Volume names of the launcher pod contract (pkg/launcherpod).
const (
	// PrivateVolume is mounted at /var/run/nativevirt in the pod: libvirt
	// socket, VNC socket, serial log, ready marker.
	PrivateVolume = "private"
	// DisksVolume is mounted at /var/run/nativevirt-disks in the pod.
	DisksVolume = "disks"
)

// Paths inside the private volume (relative).
const (
	// LibvirtSocket is libvirtd's read-write socket.
	LibvirtSocket = "libvirt/libvirt-sock"
	// VNCSocket is QEMU's VNC listener.
	VNCSocket = "vnc.sock"
	// ReadyMarker exists once the launcher's libvirtd answers.
	ReadyMarker = "ready"
	// TerminatedMarker exists once the launcher was told to end (SIGTERM) and shuts the guest
	// down: the kubelet deleting the pod, or stopping the container after a failed liveness
	// probe.
	TerminatedMarker = "terminated"
)

// Locator computes host paths of pod volumes under one kubelet root.
type Locator struct {
	// KubeletRoot is the kubelet's --root-dir (default /var/lib/kubelet).
	KubeletRoot string
}

// EmptyDir is the host path of the emptyDir volume of the pod.
func (l Locator) EmptyDir(podUID types.UID, volume string) string {
	return filepath.Join(l.KubeletRoot, "pods", string(podUID), "volumes", "kubernetes.io~empty-dir", volume)
}

// Dir is an open directory whose contents are named through /proc/self/fd.
type Dir struct {
	f    *os.File
	host string
}

// Open opens the directory at host path p.
func Open(p string) (*Dir, error) {
	f, err := os.Open(p)
	if err != nil {
		return nil, err
	}
	st, err := f.Stat()
	if err != nil {
		_ = f.Close()
		return nil, err
	}
	if !st.IsDir() {
		_ = f.Close()
		return nil, fmt.Errorf("%s is not a directory", p)
	}
	return &Dir{f: f, host: p}, nil
}

// Path names rel below the directory with a short /proc/self/fd path.
func (d *Dir) Path(rel string) string {
	return "/proc/self/fd/" + strconv.Itoa(int(d.f.Fd())) + "/" + rel
}

// HostPath is the long host path of rel below the directory (for messages).
func (d *Dir) HostPath(rel string) string {
	return filepath.Join(d.host, rel)
}

// Exists reports whether rel exists below the directory.
func (d *Dir) Exists(rel string) bool {
	_, err := os.Stat(d.Path(rel))
	return err == nil
}

// Close closes the directory; paths from Path stop working.
func (d *Dir) Close() error {
	if d == nil || d.f == nil {
		return nil
	}
	return d.f.Close()
}

// ErrNotReady is returned by OpenLauncher while the launcher has not written
// its ready marker.
var ErrNotReady = errors.New("launcher not ready")

// Launcher is the pair of open volumes of one launcher pod.
type Launcher struct {
	// PodUID is the pod's uid.
	PodUID types.UID
	// Private is the private volume (sockets, ready marker).
	Private *Dir
	// Disks is the disks volume.
	Disks *Dir
}

// OpenLauncher opens both volumes of the pod and checks the ready marker; it
// returns ErrNotReady (wrapped) while the volumes or the marker are missing.
func (l Locator) OpenLauncher(podUID types.UID) (*Launcher, error) {
	priv, err := Open(l.EmptyDir(podUID, PrivateVolume))
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrNotReady, err)
	}
	if !priv.Exists(ReadyMarker) {
		_ = priv.Close()
		return nil, fmt.Errorf("%w: no %s", ErrNotReady, priv.HostPath(ReadyMarker))
	}
	disks, err := Open(l.EmptyDir(podUID, DisksVolume))
	if err != nil {
		_ = priv.Close()
		return nil, fmt.Errorf("%w: %v", ErrNotReady, err)
	}
	return &Launcher{PodUID: podUID, Private: priv, Disks: disks}, nil
}

// Close closes both volumes.
func (l *Launcher) Close() error {
	return errors.Join(l.Private.Close(), l.Disks.Close())
}
