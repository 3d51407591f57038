package podfs

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"sync"
	"syscall"

	"k8s.io/apimachinery/pkg/types"
)

// ReadyWatch tells when launchers write their ready marker, so that the node agent defines a
// guest the moment its launcher's libvirtd answers instead of on its next poll. It watches the
// private volumes of the launcher pods it was given with inotify (the marker is created or
// renamed into place there) and calls back with the key the pod was watched for. One inotify
// instance serves every pod of the node.
type ReadyWatch struct {
	fd     int
	f      *os.File
	notify func(key string)

	mu     sync.Mutex
	closed bool
	byWD   map[int32]watched
	byPod  map[types.UID]int32
}

type watched struct {
	pod types.UID
	key string
}

// NewReadyWatch starts watching; notify runs on the watch's own goroutine, once per marker that
// appears, and must not block. Close stops it.
func NewReadyWatch(notify func(key string)) (*ReadyWatch, error) {
	fd, err := syscall.InotifyInit1(syscall.IN_CLOEXEC | syscall.IN_NONBLOCK)
	if err != nil {
		return nil, fmt.Errorf("inotify: %w", err)
	}
	w := &ReadyWatch{
		fd: fd, notify: notify,
		// Non-blocking: reads go through the runtime's poller, and Close ends a pending one.
		f:     os.NewFile(uintptr(fd), "inotify"),
		byWD:  map[int32]watched{},
		byPod: map[types.UID]int32{},
	}
	go w.read()
	return w, nil
}

// Watch watches the private volume of the launcher pod podUID under loc for the ready marker;
// a marker written from now on calls notify(key). Watching a pod again changes nothing. It fails
// (with an error satisfying errors.Is(err, os.ErrNotExist)) while the kubelet has not created
// the volume yet. The caller checks the marker after Watch returns: one written before is not
// reported.
func (w *ReadyWatch) Watch(loc Locator, podUID types.UID, key string) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return errors.New("the ready watch is closed")
	}
	if _, ok := w.byPod[podUID]; ok {
		return nil
	}
	dir := loc.EmptyDir(podUID, PrivateVolume)
	wd, err := syscall.InotifyAddWatch(w.fd, dir, syscall.IN_CREATE|syscall.IN_MOVED_TO|syscall.IN_ONLYDIR)
	if err != nil {
		return &os.PathError{Op: "inotify_add_watch", Path: dir, Err: err}
	}
	w.byWD[int32(wd)] = watched{pod: podUID, key: key}
	w.byPod[podUID] = int32(wd)
	return nil
}

// Forget stops watching the pod (its launcher is attached, or it is gone).
func (w *ReadyWatch) Forget(podUID types.UID) {
	w.mu.Lock()
	defer w.mu.Unlock()
	wd, ok := w.byPod[podUID]
	if !ok {
		return
	}
	delete(w.byPod, podUID)
	delete(w.byWD, wd)
	if !w.closed {
		_, _ = syscall.InotifyRmWatch(w.fd, uint32(wd))
	}
}

// Watching is the number of pods watched (for tests).
func (w *ReadyWatch) Watching() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.byPod)
}

// Close stops the watch.
func (w *ReadyWatch) Close() error {
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		return nil
	}
	w.closed = true
	w.mu.Unlock()
	return w.f.Close()
}

// inotifyHeader is the size of struct inotify_event without its name.
const inotifyHeader = 16

// read delivers the events until Close.
func (w *ReadyWatch) read() {
	buf := make([]byte, 64*1024)
	for {
		n, err := w.f.Read(buf)
		if err != nil {
			return // closed (or a broken instance: the agent's poll still works)
		}
		for off := 0; off+inotifyHeader <= n; {
			wd := int32(binary.NativeEndian.Uint32(buf[off:]))
			mask := binary.NativeEndian.Uint32(buf[off+4:])
			size := int(binary.NativeEndian.Uint32(buf[off+12:]))
			end := min(off+inotifyHeader+size, n)
			name := cString(buf[off+inotifyHeader : end])
			off = end
			w.event(wd, mask, name)
		}
	}
}

// event handles one inotify event.
func (w *ReadyWatch) event(wd int32, mask uint32, name string) {
	w.mu.Lock()
	entry, ok := w.byWD[wd]
	if ok && mask&syscall.IN_IGNORED != 0 {
		// The directory is gone (the pod was deleted) or the watch was removed.
		delete(w.byWD, wd)
		if w.byPod[entry.pod] == wd {
			delete(w.byPod, entry.pod)
		}
	}
	w.mu.Unlock()
	if ok && mask&(syscall.IN_CREATE|syscall.IN_MOVED_TO) != 0 && name == ReadyMarker {
		w.notify(entry.key)
	}
}

// cString is b up to its first NUL (inotify pads names with NULs).
func cString(b []byte) string {
	for i, c := range b {
		if c == 0 {
			return string(b[:i])
		}
	}
	return string(b)
}
