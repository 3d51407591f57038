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

// Commands change the state of a VMI's guest. uid is the VMI uid the caller
// means; a mismatch is an ErrConflict (so for every part of Backend).
type Commands interface {
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
}

// Streams open byte streams to a VMI's guest.
type Streams interface {
	// Console attaches a session to the VMI's shared serial console.
	Console(ctx context.Context, namespace, name string, uid types.UID) (io.ReadWriteCloser, error)
	// VNC opens a new connection to the VMI's VNC socket.
	VNC(ctx context.Context, namespace, name string, uid types.UID) (net.Conn, error)
	// PortForward opens a new connection to a port of the guest.
	PortForward(ctx context.Context, namespace, name string, uid types.UID, port streams.ForwardedPort) (net.Conn, error)
}

// GuestQueries read what a VMI's guest shows or reports.
type GuestQueries interface {
	// Screenshot returns a PNG image of the guest's screen.
	Screenshot(ctx context.Context, namespace, name string, uid types.UID) ([]byte, error)
	// GuestAgentInfo asks the guest agent what it knows (ErrConflict when the guest runs none).
	GuestAgentInfo(ctx context.Context, namespace, name string, uid types.UID) (*kubevirtv1.VirtualMachineInstanceGuestAgentInfo, error)
}

// Tunnels connect the migration tunnels of other node agents.
type Tunnels interface {
	// MigrationTunnel connects a migration channel to the target launcher of
	// the migration migrationUID; ErrNotFound when this node is not its target.
	MigrationTunnel(ctx context.Context, migrationUID types.UID, channel streams.MigrationChannel) (net.Conn, error)
}

// Backend is what the server needs from the agent, one small interface per
// kind of request; one value may implement several parts. A request whose
// part is nil fails with 404.
type Backend struct {
	Commands
	Streams
	GuestQueries
	Tunnels
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
	logger := klog.FromContext(r.Context()).WithValues("vmi", klog.KRef(t.Namespace, t.Name), "action", t.Action)
	switch t.Action {
	case streams.ActionPause, streams.ActionUnpause, streams.ActionSoftReboot, streams.ActionFreeze, streams.ActionUnfreeze:
		h.command(w, r, t, uid, logger)
	case streams.ActionConsole, streams.ActionVNC, streams.ActionPortForward:
		h.stream(w, r, t, uid, logger)
	case streams.ActionGuestOSInfo, streams.ActionUserList, streams.ActionFileSystemList, streams.ActionScreenshot:
		h.query(w, r, t, uid)
	}
}

// errNotServed answers a request whose part of the Backend is missing.
var errNotServed = fmt.Errorf("this node agent does not serve the request: %w", ErrNotFound)

// command runs a pause, unpause, softreboot, freeze or unfreeze.
func (h *handler) command(w http.ResponseWriter, r *http.Request, t streams.Target, uid types.UID, logger klog.Logger) {
	c := h.b.Commands
	if c == nil {
		writeStatus(w, errNotServed)
		return
	}
	do := map[streams.Action]func(context.Context, string, string, types.UID) error{
		streams.ActionPause: c.Pause, streams.ActionUnpause: c.Unpause, streams.ActionSoftReboot: c.SoftReboot,
		streams.ActionUnfreeze: c.Unfreeze,
	}[t.Action]
	if t.Action == streams.ActionFreeze {
		timeout, err := time.ParseDuration(r.URL.Query().Get(streams.UnfreezeTimeoutParam))
		if err != nil || timeout < 0 {
			http.Error(w, fmt.Sprintf("freeze needs the query parameter %s, a duration of at least 0s", streams.UnfreezeTimeoutParam), http.StatusBadRequest)
			return
		}
		do = func(ctx context.Context, namespace, name string, uid types.UID) error {
			return c.Freeze(ctx, namespace, name, uid, timeout)
		}
	}
	if err := do(r.Context(), t.Namespace, t.Name, uid); err != nil {
		writeStatus(w, err)
		return
	}
	logger.Info("Done")
	w.WriteHeader(http.StatusOK)
}

// stream opens a console, VNC or port-forward stream and pipes it to the caller.
func (h *handler) stream(w http.ResponseWriter, r *http.Request, t streams.Target, uid types.UID, logger klog.Logger) {
	s := h.b.Streams
	if s == nil {
		writeStatus(w, errNotServed)
		return
	}
	ctx := r.Context()
	var (
		rwc io.ReadWriteCloser
		err error
	)
	switch t.Action {
	case streams.ActionConsole:
		rwc, err = s.Console(ctx, t.Namespace, t.Name, uid)
	case streams.ActionVNC:
		rwc, err = s.VNC(ctx, t.Namespace, t.Name, uid)
	default:
		logger = logger.WithValues("port", t.Forward.Port, "protocol", t.Forward.Protocol)
		rwc, err = s.PortForward(ctx, t.Namespace, t.Name, uid, t.Forward)
	}
	if err != nil {
		writeStatus(w, err)
		return
	}
	h.pipe(w, r, rwc, logger)
}

// query answers a screenshot or what the guest agent reports.
func (h *handler) query(w http.ResponseWriter, r *http.Request, t streams.Target, uid types.UID) {
	q := h.b.GuestQueries
	if q == nil {
		writeStatus(w, errNotServed)
		return
	}
	if t.Action == streams.ActionScreenshot {
		img, err := q.Screenshot(r.Context(), t.Namespace, t.Name, uid)
		if err != nil {
			writeStatus(w, err)
			return
		}
		w.Header().Set("Content-Type", "image/png")
		_, _ = w.Write(img)
		return
	}
	info, err := q.GuestAgentInfo(r.Context(), t.Namespace, t.Name, uid)
	if err != nil {
		writeStatus(w, err)
		return
	}
	writeJSON(w, guestAgentAnswer(t.Action, info))
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
	if h.b.Tunnels == nil {
		writeError(w, errNotServed)
		return
	}
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
