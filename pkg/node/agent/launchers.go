package agent

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
	"github.com/nativevirt/nativevirt/pkg/launcherpod"
	"github.com/nativevirt/nativevirt/pkg/node/console"
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
}

func (l *launcher) close() {
	l.freeze.stopThaw()
	l.hub.Close()
	l.stop()
	_ = l.conn.Close()
	_ = l.fs.Close()
}

// launcherPod returns the launcher pod of the VMI on this node that can run
// its domain (not finished), the newest first; nil when there is none.
func (a *Agent) launcherPod(vmi *kubevirtv1.VirtualMachineInstance) (*corev1.Pod, error) {
	pods, err := a.cfg.Pods.Pods(vmi.Namespace).List(labels.SelectorFromSet(labels.Set{
		kubevirtv1.CreatedByLabel: string(vmi.UID),
	}))
	if err != nil {
		return nil, err
	}
	var live []*corev1.Pod
	for _, p := range pods {
		if p.Spec.NodeName != a.cfg.NodeName || p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
			continue
		}
		live = append(live, p)
	}
	if len(live) == 0 {
		return nil, nil
	}
	sort.Slice(live, func(i, j int) bool {
		return live[j].CreationTimestamp.Before(&live[i].CreationTimestamp)
	})
	return live[0], nil
}

// attach returns the connection to the VMI's launcher, opening it when needed.
// It fails with podfs.ErrNotReady while the launcher is not ready.
func (a *Agent) attach(ctx context.Context, vmi *kubevirtv1.VirtualMachineInstance, pod *corev1.Pod, domain string) (*launcher, error) {
	a.mu.Lock()
	l := a.launchers[vmi.UID]
	a.mu.Unlock()
	if l != nil && l.podUID == pod.UID {
		return l, nil
	}
	if l != nil {
		a.release(vmi.UID)
	}
	key := vmi.Namespace + "/" + vmi.Name
	// Watch before looking: a marker written in between is then reported.
	a.watchReady(ctx, pod, key)
	fs, err := a.cfg.Locator.OpenLauncher(pod.UID)
	if err != nil {
		return nil, err
	}
	conn, err := a.cfg.Dial(fs.Private.Path(podfs.LibvirtSocket))
	if err != nil {
		_ = fs.Close()
		return nil, fmt.Errorf("%w: connecting to libvirt of pod %s: %v", podfs.ErrNotReady, pod.Name, err)
	}
	l = &launcher{uid: vmi.UID, key: key, podUID: pod.UID, domain: domain, fs: fs, conn: conn,
		blockVolumes: launcherpod.BlockVolumes(pod), sharedVolumes: launcherpod.SharedVolumes(pod)}
	socket := fs.Private.Path(podfs.LibvirtSocket)
	l.hub = console.NewHub(func() (io.ReadWriteCloser, error) { return a.openConsole(socket, domain) })
	stop, err := conn.Watch(func(ev virt.Event) {
		if ev.Closed {
			// Not on libvirt's event loop: closing the connection there deadlocks.
			go a.dropLauncher(l)
		}
		if ev.GuestAgent {
			l.agentChanged.Store(true)
		}
		a.queue.Add(key)
	})
	if err != nil {
		_ = conn.Close()
		_ = fs.Close()
		return nil, err
	}
	l.stop = stop
	a.mu.Lock()
	a.launchers[vmi.UID] = l
	ready := a.ready
	a.mu.Unlock()
	if ready != nil {
		ready.Forget(pod.UID)
	}
	klog.FromContext(ctx).Info("Attached to launcher", "pod", klog.KObj(pod), "domain", domain)
	a.resumeThaw(ctx, l)
	return l, nil
}

// openConsole opens the console on a connection of its own: a blocking
// console stream waiting for guest output must not hold up the lifecycle
// calls and status reads made on the launcher's main connection.
func (a *Agent) openConsole(socket, domain string) (io.ReadWriteCloser, error) {
	conn, err := a.cfg.Dial(socket)
	if err != nil {
		return nil, err
	}
	s, err := conn.OpenConsole(domain)
	if err != nil {
		_ = conn.Close()
		return nil, err
	}
	return &consoleConn{ReadWriteCloser: s, conn: conn}, nil
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

// dropLauncher forgets l after its daemon went away.
func (a *Agent) dropLauncher(l *launcher) {
	a.mu.Lock()
	if a.launchers[l.uid] == l {
		delete(a.launchers, l.uid)
	} else {
		l = nil
	}
	a.mu.Unlock()
	if l != nil {
		l.close()
	}
}

// release closes the attachment of uid, if any.
func (a *Agent) release(uid types.UID) {
	a.mu.Lock()
	l := a.launchers[uid]
	delete(a.launchers, uid)
	a.mu.Unlock()
	if l != nil {
		l.close()
	}
}

// attached returns the current attachment of uid, or nil.
func (a *Agent) attached(uid types.UID) *launcher {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.launchers[uid]
}

// forgetKey drops every attachment and checkpoint of key whose uid is not keep.
func (a *Agent) forgetKey(key string, keep types.UID) error {
	a.mu.Lock()
	var drop []types.UID
	for uid, l := range a.launchers {
		if l.key == key && uid != keep {
			drop = append(drop, uid)
		}
	}
	a.mu.Unlock()
	for _, uid := range drop {
		a.release(uid)
	}
	for _, r := range a.cfg.Store.List() {
		if r.Key() == key && r.UID != keep {
			a.release(r.UID)
			if err := a.cfg.Store.Delete(r.UID); err != nil {
				return err
			}
		}
	}
	return nil
}

// watchReadyMarkers starts reporting launchers' ready markers: each one
// enqueues the VMI its pod was watched for.
func (a *Agent) watchReadyMarkers() error {
	w, err := podfs.NewReadyWatch(func(key string) { a.queue.Add(key) })
	if err != nil {
		return err
	}
	a.mu.Lock()
	a.ready = w
	a.mu.Unlock()
	return nil
}

func (a *Agent) stopWatchingReadyMarkers() {
	a.mu.Lock()
	w := a.ready
	a.ready = nil
	a.mu.Unlock()
	if w != nil {
		_ = w.Close()
	}
}

// watchReady makes the ready marker of pod enqueue key (the pod's private
// volume may not exist yet: the pod's next status change brings the VMI back).
func (a *Agent) watchReady(ctx context.Context, pod *corev1.Pod, key string) {
	a.mu.Lock()
	w := a.ready
	a.mu.Unlock()
	if w == nil {
		return
	}
	if err := w.Watch(a.cfg.Locator, pod.UID, key); err != nil && !errors.Is(err, os.ErrNotExist) {
		klog.FromContext(ctx).V(2).Info("Not watching the launcher's ready marker; polling", "pod", klog.KObj(pod), "err", err)
	}
}
