package streams

import (
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
)

const (
	// DefaultPort is the port the node agent serves the stream protocol on.
	DefaultPort = 8186
	// HandlerEndpointAnnotation is the Node annotation in which the node agent
	// publishes the host:port of its stream endpoint.
	HandlerEndpointAnnotation = "nativevirt.io/handler-endpoint"
	// VMIUIDHeader carries the uid of the VMI a request is meant for.
	VMIUIDHeader = "X-NativeVirt-VMI-UID"
	// APIServerCommonName is the only client certificate common name the node
	// agent accepts.
	APIServerCommonName = "nativevirt-apiserver"
	// Subprotocol is the WebSocket subprotocol of console and vnc streams: binary
	// frames carrying raw bytes (KubeVirt's "plain" protocol).
	Subprotocol = "plain.kubevirt.io"
)

// UnfreezeTimeoutParam is the query parameter of a freeze at the node agent: a Go duration
// (time.ParseDuration) after which the guest is thawed again; "0s" never.
const UnfreezeTimeoutParam = "unfreezeTimeout"

// Action is one thing the node agent does for a VMI.
type Action string

const (
	// ActionConsole streams the serial console (GET, WebSocket).
	ActionConsole Action = "console"
	// ActionVNC streams the VNC display (GET, WebSocket).
	ActionVNC Action = "vnc"
	// ActionPause pauses the guest (PUT).
	ActionPause Action = "pause"
	// ActionUnpause resumes a paused guest (PUT).
	ActionUnpause Action = "unpause"
	// ActionSoftReboot asks the guest to reboot (PUT).
	ActionSoftReboot Action = "softreboot"
	// ActionFreeze freezes the guest's file systems through its guest agent (PUT); the query
	// parameter UnfreezeTimeoutParam says when the node agent thaws them by itself.
	ActionFreeze Action = "freeze"
	// ActionUnfreeze thaws them (PUT).
	ActionUnfreeze Action = "unfreeze"
	// ActionPortForward streams a connection to a port of the guest (GET, WebSocket); its path
	// ends in the port and the protocol (ForwardedPort).
	ActionPortForward Action = "portforward"
	// ActionGuestOSInfo asks the guest agent what it knows (GET, JSON).
	ActionGuestOSInfo Action = "guestosinfo"
	// ActionUserList lists the users logged in to the guest (GET, JSON).
	ActionUserList Action = "userlist"
	// ActionFileSystemList lists the guest's file systems (GET, JSON).
	ActionFileSystemList Action = "filesystemlist"
	// ActionScreenshot takes a picture of the guest's screen (GET, PNG); the API serves it as
	// vnc/screenshot.
	ActionScreenshot Action = "screenshot"
)

// Actions lists every action, streams first.
var Actions = []Action{ActionConsole, ActionVNC, ActionPortForward, ActionPause, ActionUnpause, ActionSoftReboot,
	ActionFreeze, ActionUnfreeze, ActionGuestOSInfo, ActionUserList, ActionFileSystemList, ActionScreenshot}

// IsStream reports whether the action is a WebSocket stream rather than a
// one-shot request.
func (a Action) IsStream() bool {
	return a == ActionConsole || a == ActionVNC || a == ActionPortForward
}

// IsQuery reports whether the action reads something of the guest and answers it (JSON of the
// guest agent, or a screenshot).
func (a Action) IsQuery() bool {
	return a == ActionGuestOSInfo || a == ActionUserList || a == ActionFileSystemList || a == ActionScreenshot
}

// TakesPort reports whether the action's path names a guest port (ForwardedPort).
func (a Action) TakesPort() bool {
	return a == ActionPortForward
}

// ForwardedPort is the guest port of a portforward action. KubeVirt's paths name it as
// {port} (TCP) or {port}/{protocol}.
type ForwardedPort struct {
	Port int
	// Protocol is "tcp" or "udp".
	Protocol string
}

// String is the port as a path names it: {port}/{protocol}.
func (f ForwardedPort) String() string { return strconv.Itoa(f.Port) + "/" + f.Protocol }

// ParseForwardedPort reads the path segments after portforward/: a port (1–65535), optionally
// followed by tcp or udp (tcp when absent).
func ParseForwardedPort(segments []string) (ForwardedPort, error) {
	if len(segments) == 0 || len(segments) > 2 {
		return ForwardedPort{}, fmt.Errorf("a port forward names {port} or {port}/{protocol}, got %q", strings.Join(segments, "/"))
	}
	port, err := strconv.Atoi(segments[0])
	if err != nil || port < 1 || port > 65535 || segments[0] != strconv.Itoa(port) {
		return ForwardedPort{}, fmt.Errorf("invalid port %q: must be a number from 1 to 65535", segments[0])
	}
	f := ForwardedPort{Port: port, Protocol: "tcp"}
	if len(segments) == 2 {
		f.Protocol = segments[1]
	}
	if f.Protocol != "tcp" && f.Protocol != "udp" {
		return ForwardedPort{}, fmt.Errorf("invalid protocol %q: must be tcp or udp", f.Protocol)
	}
	return f, nil
}

// Method is the HTTP method the action is requested with.
func (a Action) Method() string {
	if a.IsStream() || a.IsQuery() {
		return http.MethodGet
	}
	return http.MethodPut
}

// Valid reports whether a is one of Actions.
func (a Action) Valid() bool {
	for _, known := range Actions {
		if a == known {
			return true
		}
	}
	return false
}

// Target names the VMI and action of one request.
type Target struct {
	Namespace string
	Name      string
	Action    Action
	// Forward is the guest port of a portforward action (zero otherwise).
	Forward ForwardedPort
}

const pathPrefix = "/v1/namespaces/"

// Path is the URL path of an action on the VMI namespace/name.
func Path(namespace, name string, action Action) string {
	return pathPrefix + namespace + "/virtualmachineinstances/" + name + "/" + string(action)
}

// Path is the URL path of t; a portforward path ends in the port and the protocol.
func (t Target) Path() string {
	p := Path(t.Namespace, t.Name, t.Action)
	if t.Action.TakesPort() {
		p += "/" + t.Forward.String()
	}
	return p
}

// URL is the https URL of t at the node agent endpoint ("host:port").
func (t Target) URL(endpoint string) string {
	u := url.URL{Scheme: "https", Host: endpoint, Path: t.Path()}
	return u.String()
}

// ParsePath parses a path built by Path. Namespace and name must be valid
// object names and the action must be known, so a parsed Target is safe to use
// as a lookup key.
func ParsePath(p string) (Target, error) {
	rest, ok := strings.CutPrefix(p, pathPrefix)
	if !ok {
		return Target{}, fmt.Errorf("path %q does not start with %s", p, pathPrefix)
	}
	parts := strings.Split(rest, "/")
	if len(parts) < 4 || parts[1] != "virtualmachineinstances" || (len(parts) != 4 && !Action(parts[3]).TakesPort()) {
		return Target{}, fmt.Errorf("path %q is not %s{namespace}/virtualmachineinstances/{name}/{action}", p, pathPrefix)
	}
	t := Target{Namespace: parts[0], Name: parts[2], Action: Action(parts[3])}
	if t.Action.TakesPort() {
		// The apiserver always sends both: the port and the protocol.
		if len(parts) != 6 {
			return Target{}, fmt.Errorf("path %q does not end in portforward/{port}/{protocol}", p)
		}
		f, err := ParseForwardedPort(parts[4:])
		if err != nil {
			return Target{}, err
		}
		t.Forward = f
	}
	if errs := validation.IsDNS1123Label(t.Namespace); len(errs) > 0 {
		return Target{}, fmt.Errorf("invalid namespace %q: %s", t.Namespace, strings.Join(errs, "; "))
	}
	if errs := validation.IsDNS1123Subdomain(t.Name); len(errs) > 0 {
		return Target{}, fmt.Errorf("invalid name %q: %s", t.Name, strings.Join(errs, "; "))
	}
	if !t.Action.Valid() {
		return Target{}, fmt.Errorf("unknown action %q", t.Action)
	}
	return t, nil
}
