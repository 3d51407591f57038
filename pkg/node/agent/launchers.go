package agent

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
	"github.com/nativevirt/nativevirt/pkg/launcherpod"
	"github.com/nativevirt/nativevirt/pkg/node/console"
	"github.com/nativevirt/nativevirt/pkg/node/domains"
	"github.com/nativevirt/nativevirt/pkg/node/podfs"
	"github.com/nativevirt/nativevirt/pkg/node/virt"
)

// launcher is the agent's attachment to the launcher pod of one VMI: its open
// volumes, the libvirt connection, the event watch and the shared console.
type launcher struct {
	uid    types.UID
	key    string
	podUID types.UID
	domain string
	fs     *podfs.Launcher
	// blockVolumes are the volumes the pod attaches as block devices (claims in block mode).
	blockVolumes map[string]bool
	// sharedVolumes are its ReadWriteMany claims (launcherpod.SharedVolumesAnnotation).
	sharedVolumes map[string]bool
	conn          virt.Conn
	stop          func()
	hub           *console.Hub
	// guestOSAt is when the guest agent was last asked (sync workers only;
	// one key is never synced by two workers at once).
	guestOSAt time.Time
	// credentialsDigest identifies the access credentials last written into the guest by its
	// agent (sync workers only).
	credentialsDigest string
	// agentChanged is set when the guest agent connected or disconnected: the next status asks
	// it again without waiting for the resync.
	agentChanged atomic.Bool
	// freeze is the guest's file system freeze.
	freeze fsFreeze
	// details are the running domain's, read once by the first status of the running domain
	// (the scrapes of the metrics read them too).
	details atomic.Pointer[virt.DomainDetails]
	// guestInterfaces is what the guest agent last said of the guest's interfaces (sync
	// workers only).
	guestInterfaces []virt.GuestInterface
	// podIPs are the pod interface's addresses as the network preparation found them (sync
	// workers only): the status reports them when the kubelet has not yet written the pod's
	// IPs into its status, so that the start's Running status needs no second write for them.
	podIPs []string
	// closed is closed once the attachment is (tests wait for an asynchronous drop).
	closed    chan struct{}
	closeOnce sync.Once
}

// close ends the attachment: the thaw timer, the console, the event watch,
// the connection and the open volumes. Later calls do nothing.
func (l *launcher) close() {
	l.closeOnce.Do(func() {
		l.freeze.stopThaw()
		l.hub.Close()
		l.stop()
		_ = l.conn.Close()
		_ = l.fs.Close()
		close(l.closed)
	})
}

// launcherSet holds the agent's attachments to launcher pods, by VMI uid,
// and the watch of their ready markers.
type launcherSet struct {
	locator podfs.Locator
	dial    virt.DialFunc
	store   *domains.Store
	enqueue func(key string)
	// attached is called with each new attachment (the freezer resumes a
	// pending thaw).
	attached func(ctx context.Context, l *launcher)

	mu    sync.Mutex
	byUID map[types.UID]*launcher
	// ready reports launchers' ready markers as they appear (nil: the
	// waitForLauncher poll alone notices them).
	ready *podfs.ReadyWatch
}

// newLauncherSet returns an empty set.
func newLauncherSet(locator podfs.Locator, dial virt.DialFunc, store *domains.Store, enqueue func(string), attached func(context.Context, *launcher)) *launcherSet {
	return &launcherSet{locator: locator, dial: dial, store: store, enqueue: enqueue, attached: attached,
		byUID: map[types.UID]*launcher{}}
}

// attach returns the connection to the VMI's launcher, opening it when needed.
// It fails with podfs.ErrNotReady while the launcher is not ready.
func (s *launcherSet) attach(ctx context.Context, vmi *kubevirtv1.VirtualMachineInstance, pod *corev1.Pod, domain string) (*launcher, error) {
	s.mu.Lock()
	l := s.byUID[vmi.UID]
	s.mu.Unlock()
	if l != nil && l.podUID == pod.UID {
		return l, nil
	}
	if l != nil {
		s.release(vmi.UID)
	}
	key := vmi.Namespace + "/" + vmi.Name
	// Watch before looking: a marker written in between is then reported.
	s.watchReady(ctx, pod, key)
	fs, err := s.locator.OpenLauncher(pod.UID)
	if err != nil {
		return nil, err
	}
	conn, err := s.dial(fs.Private.Path(podfs.LibvirtSocket))
	if err != nil {
		_ = fs.Close()
		return nil, fmt.Errorf("%w: connecting to libvirt of pod %s: %v", podfs.ErrNotReady, pod.Name, err)
	}
	l = &launcher{uid: vmi.UID, key: key, podUID: pod.UID, domain: domain, fs: fs, conn: conn, closed: make(chan struct{}),
		blockVolumes: launcherpod.BlockVolumes(pod), sharedVolumes: launcherpod.SharedVolumes(pod)}
	socket := fs.Private.Path(podfs.LibvirtSocket)
	l.hub = console.NewHub(func() (io.ReadWriteCloser, error) { return s.openConsole(socket, domain) })
	stop, err := conn.Watch(func(ev virt.Event) {
		if ev.Closed {
			// Not on libvirt's event loop: closing the connection there deadlocks.
			go s.drop(l)
		}
		if ev.GuestAgent {
			l.agentChanged.Store(true)
		}
		s.enqueue(key)
	})
	if err != nil {
		_ = conn.Close()
		_ = fs.Close()
		return nil, err
	}
	l.stop = stop
	s.mu.Lock()
	s.byUID[vmi.UID] = l
	ready := s.ready
	s.mu.Unlock()
	if ready != nil {
		ready.Forget(pod.UID)
	}
	klog.FromContext(ctx).Info("Attached to launcher", "pod", klog.KObj(pod), "domain", domain)
	s.attached(ctx, l)
	return l, nil
}

// openConsole opens the console on a connection of its own: a blocking
// console stream waiting for guest output must not hold up the lifecycle
// calls and status reads made on the launcher's main connection.
func (s *launcherSet) openConsole(socket, domain string) (io.ReadWriteCloser, error) {
	conn, err := s.dial(socket)
	if err != nil {
		return nil, err
	}
	stream, err := conn.OpenConsole(domain)
	if err != nil {
		_ = conn.Close()
		return nil, err
	}
	return &consoleConn{ReadWriteCloser: stream, conn: conn}, nil
}

// consoleConn is a console stream that owns its connection.
type consoleConn struct {
	io.ReadWriteCloser
	conn virt.Conn
}

func (c *consoleConn) Close() error {
	err := c.ReadWriteCloser.Close()
	_ = c.conn.Close()
	return err
}

// drop forgets l after its daemon went away.
func (s *launcherSet) drop(l *launcher) {
	s.mu.Lock()
	if s.byUID[l.uid] == l {
		delete(s.byUID, l.uid)
	} else {
		l = nil
	}
	s.mu.Unlock()
	if l != nil {
		l.close()
	}
}

// release closes the attachment of uid, if any.
func (s *launcherSet) release(uid types.UID) {
	s.mu.Lock()
	l := s.byUID[uid]
	delete(s.byUID, uid)
	s.mu.Unlock()
	if l != nil {
		l.close()
	}
}

// get returns the current attachment of uid, or nil.
func (s *launcherSet) get(uid types.UID) *launcher {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.byUID[uid]
}

// forgetKey drops every attachment and checkpoint of key whose uid is not keep.
func (s *launcherSet) forgetKey(key string, keep types.UID) error {
	s.mu.Lock()
	var drop []types.UID
	for uid, l := range s.byUID {
		if l.key == key && uid != keep {
			drop = append(drop, uid)
		}
	}
	s.mu.Unlock()
	for _, uid := range drop {
		s.release(uid)
	}
	for _, r := range s.store.List() {
		if r.Key() == key && r.UID != keep {
			s.release(r.UID)
			if err := s.store.Delete(r.UID); err != nil {
				return err
			}
		}
	}
	return nil
}

// watchReadyMarkers starts reporting launchers' ready markers: each one
// enqueues the VMI its pod was watched for.
func (s *launcherSet) watchReadyMarkers() error {
	w, err := podfs.NewReadyWatch(func(key string) { s.enqueue(key) })
	if err != nil {
		return err
	}
	s.mu.Lock()
	s.ready = w
	s.mu.Unlock()
	return nil
}

func (s *launcherSet) stopWatchingReadyMarkers() {
	s.mu.Lock()
	w := s.ready
	s.ready = nil
	s.mu.Unlock()
	if w != nil {
		_ = w.Close()
	}
}

// watchReady makes the ready marker of pod enqueue key (the pod's private
// volume may not exist yet: the pod's next status change brings the VMI back).
func (s *launcherSet) watchReady(ctx context.Context, pod *corev1.Pod, key string) {
	s.mu.Lock()
	w := s.ready
	s.mu.Unlock()
	if w == nil {
		return
	}
	if err := w.Watch(s.locator, pod.UID, key); err != nil && !errors.Is(err, os.ErrNotExist) {
		klog.FromContext(ctx).V(2).Info("Not watching the launcher's ready marker; polling", "pod", klog.KObj(pod), "err", err)
	}
}

// list returns the current attachments.
func (s *launcherSet) list() []*launcher {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]*launcher, 0, len(s.byUID))
	for _, l := range s.byUID {
		out = append(out, l)
	}
	return out
}

// closeAll closes every attachment (the agent stops).
func (s *launcherSet) closeAll() {
	s.mu.Lock()
	all := s.byUID
	s.byUID = map[types.UID]*launcher{}
	s.mu.Unlock()
	for _, l := range all {
		l.close()
	}
}
