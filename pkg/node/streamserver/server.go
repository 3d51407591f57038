// Package streamserver is the node agent's side of the protocol of package
// streams: an HTTPS handler (mutual TLS) serving, to the apiserver's client
// certificate only, per VMI the serial console, VNC and connections to the
// guest's ports as WebSocket byte streams and the pause, unpause and
// softreboot commands; and, to other node
// agents' certificates only, the migration tunnels into the launcher pods this
// node is the migration target of.
//
// Console sessions share the VMI's one serial console (see package console):
// guest output reaches every session, input from any session reaches the
// guest. Each VNC session gets its own connection to QEMU's VNC socket (QEMU
// decides whether to share the display).
package streamserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
	"github.com/nativevirt/nativevirt/pkg/streams"
)

// ErrNotFound (wrapped) makes a request fail with 404: the agent knows no
// domain for the VMI.
var ErrNotFound = errors.New("not found")

// ErrUnavailable (wrapped) makes a request fail with 503 and Retry-After: the
// agent expects a domain for the VMI but has not (re-)attached to it yet, e.g.
// right after the agent restarted.
var ErrUnavailable = errors.New("unavailable")

// ErrConflict (wrapped) makes a request fail with 409: the VMI's state does
// not allow the action, or the uid does not match.
var ErrConflict = errors.New("conflict")

// Backend is what the server needs from the agent. uid is the VMI uid the
// caller means; a mismatch is an ErrConflict.
type Backend interface {
	// Pause pauses the guest's vCPUs.
	Pause(ctx context.Context, namespace, name string, uid types.UID) error
	// Unpause resumes them.
	Unpause(ctx context.Context, namespace, name string, uid types.UID) error
	// SoftReboot asks the guest to reboot.
	SoftReboot(ctx context.Context, namespace, name string, uid types.UID) error
	// Freeze freezes the guest's file systems and thaws them after unfreezeTimeout (0: never).
	Freeze(ctx context.Context, namespace, name string, uid types.UID, unfreezeTimeout time.Duration) error
	// Unfreeze thaws them.
	Unfreeze(ctx context.Context, namespace, name string, uid types.UID) error
	// Console attaches a session to the VMI's shared serial console.
	Console(ctx context.Context, namespace, name string, uid types.UID) (io.ReadWriteCloser, error)
	// VNC opens a new connection to the VMI's VNC socket.
	VNC(ctx context.Context, namespace, name string, uid types.UID) (net.Conn, error)
	// PortForward opens a new connection to a port of the guest.
	PortForward(ctx context.Context, namespace, name string, uid types.UID, port streams.ForwardedPort) (net.Conn, error)
	// Screenshot returns a PNG image of the guest's screen.
	Screenshot(ctx context.Context, namespace, name string, uid types.UID) ([]byte, error)
	// GuestAgentInfo asks the guest agent what it knows (ErrConflict when the guest runs none).
	GuestAgentInfo(ctx context.Context, namespace, name string, uid types.UID) (*kubevirtv1.VirtualMachineInstanceGuestAgentInfo, error)
	// MigrationTunnel connects a migration channel to the target launcher of
	// the migration migrationUID; ErrNotFound when this node is not its target.
	MigrationTunnel(ctx context.Context, migrationUID types.UID, channel streams.MigrationChannel) (net.Conn, error)
}

// Handler serves the protocol on top of b. Wrap it in an http.Server whose
// TLSConfig is streams.ServerTLSConfig.
func Handler(b Backend) http.Handler {
	return &handler{b: b}
}

type handler struct {
	b Backend
}

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	// Defence in depth: the TLS config already refused other clients.
	role := ""
	if r.TLS != nil {
		role = streams.ClientRole(r.TLS.PeerCertificates)
	}
	if streams.IsMigrationPath(r.URL.Path) {
		if role != streams.HandlerCommonName {
			http.Error(w, "migration tunnels are open to node agents only", http.StatusForbidden)
			return
		}
		h.tunnel(w, r)
		return
	}
	if role != streams.APIServerCommonName {
		http.Error(w, "VMI streams and commands are open to the apiserver only", http.StatusForbidden)
		return
	}
	t, err := streams.ParsePath(r.URL.Path)
	if err != nil {
		http.Error(w, err.Error(), http.StatusNotFound)
		return
	}
	if r.Method != t.Action.Method() {
		w.Header().Set("Allow", t.Action.Method())
		http.Error(w, fmt.Sprintf("%s needs %s", t.Action, t.Action.Method()), http.StatusMethodNotAllowed)
		return
	}
	uid := types.UID(r.Header.Get(streams.VMIUIDHeader))
	if uid == "" {
		http.Error(w, "missing header "+streams.VMIUIDHeader, http.StatusBadRequest)
		return
	}
	ctx := r.Context()
	logger := klog.FromContext(ctx).WithValues("vmi", klog.KRef(t.Namespace, t.Name), "action", t.Action)
	switch t.Action {
	case streams.ActionPause, streams.ActionUnpause, streams.ActionSoftReboot, streams.ActionFreeze, streams.ActionUnfreeze:
		do := map[streams.Action]func(context.Context, string, string, types.UID) error{
			streams.ActionPause: h.b.Pause, streams.ActionUnpause: h.b.Unpause, streams.ActionSoftReboot: h.b.SoftReboot,
			streams.ActionUnfreeze: h.b.Unfreeze,
		}[t.Action]
		if t.Action == streams.ActionFreeze {
			timeout, err := time.ParseDuration(r.URL.Query().Get(streams.UnfreezeTimeoutParam))
			if err != nil || timeout < 0 {
				http.Error(w, fmt.Sprintf("freeze needs the query parameter %s, a duration of at least 0s", streams.UnfreezeTimeoutParam), http.StatusBadRequest)
				return
			}
			do = func(ctx context.Context, namespace, name string, uid types.UID) error {
				return h.b.Freeze(ctx, namespace, name, uid, timeout)
			}
		}
		if err := do(ctx, t.Namespace, t.Name, uid); err != nil {
			writeStatus(w, err)
			return
		}
		logger.Info("Done")
		w.WriteHeader(http.StatusOK)
	case streams.ActionConsole:
		s, err := h.b.Console(ctx, t.Namespace, t.Name, uid)
		if err != nil {
			writeStatus(w, err)
			return
		}
		h.pipe(w, r, s, logger)
	case streams.ActionVNC:
		c, err := h.b.VNC(ctx, t.Namespace, t.Name, uid)
		if err != nil {
			writeStatus(w, err)
			return
		}
		h.pipe(w, r, c, logger)
	case streams.ActionGuestOSInfo, streams.ActionUserList, streams.ActionFileSystemList:
		info, err := h.b.GuestAgentInfo(ctx, t.Namespace, t.Name, uid)
		if err != nil {
			writeStatus(w, err)
			return
		}
		writeJSON(w, guestAgentAnswer(t.Action, info))
	case streams.ActionScreenshot:
		img, err := h.b.Screenshot(ctx, t.Namespace, t.Name, uid)
		if err != nil {
			writeStatus(w, err)
			return
		}
		w.Header().Set("Content-Type", "image/png")
		_, _ = w.Write(img)
	case streams.ActionPortForward:
		c, err := h.b.PortForward(ctx, t.Namespace, t.Name, uid, t.Forward)
		if err != nil {
			writeStatus(w, err)
			return
		}
		h.pipe(w, r, c, logger.WithValues("port", t.Forward.Port, "protocol", t.Forward.Protocol))
	}
}

// pipe upgrades the request and bridges it to rwc until either side ends.
func (h *handler) pipe(w http.ResponseWriter, r *http.Request, rwc io.ReadWriteCloser, logger klog.Logger) {
	ws, err := streams.Upgrade(w, r)
	if err != nil {
		_ = rwc.Close()
		logger.V(2).Info("WebSocket upgrade failed", "err", err)
		return
	}
	logger.V(2).Info("Stream opened")
	if err := streams.Pipe(r.Context(), ws, rwc); err != nil {
		logger.V(2).Info("Stream ended", "err", err)
		return
	}
	logger.V(2).Info("Stream closed")
}

// tunnel connects a migration tunnel to the target launcher and splices the
// two until the source side is done.
func (h *handler) tunnel(w http.ResponseWriter, r *http.Request) {
	t, err := streams.ParseMigrationPath(r.URL.Path)
	if err != nil {
		http.Error(w, err.Error(), http.StatusNotFound)
		return
	}
	if r.Method != http.MethodGet || !streams.IsTunnelUpgrade(r) {
		http.Error(w, "a migration tunnel is a GET with Upgrade: "+streams.MigrationUpgrade, http.StatusBadRequest)
		return
	}
	logger := klog.FromContext(r.Context()).WithValues("migration", t.UID, "channel", t.Channel, "from", r.RemoteAddr)
	back, err := h.b.MigrationTunnel(r.Context(), t.UID, t.Channel)
	if err != nil {
		logger.Info("Migration tunnel refused", "err", err)
		writeError(w, err)
		return
	}
	conn, err := streams.AcceptTunnel(w, r)
	if err != nil {
		_ = back.Close()
		logger.Info("Migration tunnel upgrade failed", "err", err)
		return
	}
	logger.V(2).Info("Migration tunnel open")
	in, out := streams.Splice(conn, back)
	logger.V(2).Info("Migration tunnel closed", "bytesIn", in, "bytesOut", out)
}

// guestAgentAnswer is what a guest agent action answers, in KubeVirt's kinds: the whole
// information, or its users or file systems as a list.
func guestAgentAnswer(a streams.Action, info *kubevirtv1.VirtualMachineInstanceGuestAgentInfo) any {
	tm := func(kind string) metav1.TypeMeta {
		return metav1.TypeMeta{APIVersion: kubevirtv1.SubresourceGroupVersion.String(), Kind: kind}
	}
	switch a {
	case streams.ActionUserList:
		l := &kubevirtv1.VirtualMachineInstanceGuestOSUserList{TypeMeta: tm("VirtualMachineInstanceGuestOSUserList"), Items: info.UserList}
		if l.Items == nil {
			l.Items = []kubevirtv1.VirtualMachineInstanceGuestOSUser{}
		}
		return l
	case streams.ActionFileSystemList:
		l := &kubevirtv1.VirtualMachineInstanceFileSystemList{TypeMeta: tm("VirtualMachineInstanceFileSystemList"), Items: info.FSInfo.Filesystems}
		if l.Items == nil {
			l.Items = []kubevirtv1.VirtualMachineInstanceFileSystem{}
		}
		return l
	}
	out := *info
	out.TypeMeta = tm("VirtualMachineInstanceGuestAgentInfo")
	return &out
}

func writeJSON(w http.ResponseWriter, v any) {
	body, err := json.Marshal(v)
	if err != nil {
		writeStatus(w, err)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(body)
}

// writeError answers a migration tunnel's failure in plain text.
func writeError(w http.ResponseWriter, err error) {
	code, _, _ := classify(err)
	if code == http.StatusServiceUnavailable {
		w.Header().Set("Retry-After", "1")
	}
	http.Error(w, err.Error(), code)
}

// writeStatus answers a VMI request's failure as a metav1.Status, as the API does: the apiserver
// passes a failed stream upgrade on to the caller unchanged, and virtctl shows the message of a
// Status (of a plain text answer only the code).
func writeStatus(w http.ResponseWriter, err error) {
	code, reason, sentinel := classify(err)
	msg := err.Error()
	if sentinel != nil {
		msg = strings.TrimSuffix(msg, ": "+sentinel.Error())
	}
	st := metav1.Status{
		TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"},
		Status:   metav1.StatusFailure,
		Message:  msg,
		Reason:   reason,
		Code:     int32(code),
	}
	body, jerr := json.Marshal(st)
	if jerr != nil {
		http.Error(w, msg, code)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	if code == http.StatusServiceUnavailable {
		w.Header().Set("Retry-After", "1")
	}
	w.WriteHeader(code)
	_, _ = w.Write(body)
}

// classify maps err to its HTTP code and API reason, and the sentinel it wraps (nil: none).
func classify(err error) (int, metav1.StatusReason, error) {
	switch {
	case errors.Is(err, ErrNotFound):
		return http.StatusNotFound, metav1.StatusReasonNotFound, ErrNotFound
	case errors.Is(err, ErrConflict):
		return http.StatusConflict, metav1.StatusReasonConflict, ErrConflict
	case errors.Is(err, ErrUnavailable):
		return http.StatusServiceUnavailable, metav1.StatusReasonServiceUnavailable, ErrUnavailable
	}
	return http.StatusInternalServerError, metav1.StatusReasonInternalError, nil
}
