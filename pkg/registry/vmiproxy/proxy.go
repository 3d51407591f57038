// Package vmiproxy serves the VirtualMachineInstance subresources that the node agent carries
// out: pause, unpause and softreboot (PUT), the guest agent's guestosinfo, userlist and
// filesystemlist (GET, JSON) and the console, vnc and portforward streams (GET, WebSocket;
// portforward also on VirtualMachines). The
// apiserver checks the instance's state, finds its node agent through the Node annotation
// streams.HandlerEndpointAnnotation and forwards the request there over mutual TLS (package
// streams). A WebSocket upgrade is proxied unchanged: the bytes between virtctl and the node
// agent are not touched, and both ends ping every streams.PingInterval so that idle sessions
// stay open. Several console sessions of one instance share its serial console; that is the
// node agent's doing (output goes to all, input from all goes to the guest).
package vmiproxy

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/proxy"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/streaming/pkg/httpstream"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
	"github.com/nativevirt/nativevirt/pkg/registry/subresource"
	"github.com/nativevirt/nativevirt/pkg/streams"
)

// requestTimeout bounds a one-shot call to the node agent (pause, guestosinfo, ...).
const requestTimeout = 30 * time.Second

// notConfigured explains the 503 of an apiserver started without the node agent settings.
const notConfigured = "this apiserver has no connection to node agents: start it with --node-agent-ca-file, " +
	"--node-agent-client-cert-file and --node-agent-client-key-file (and access to the Kubernetes API)"

// NodeResolver finds the stream endpoint ("host:port") of the node agent of a node.
type NodeResolver interface {
	Endpoint(ctx context.Context, nodeName string) (string, error)
}

// Proxy forwards instance actions to node agents.
type Proxy struct {
	instances rest.Getter
	vms       rest.Getter
	nodes     NodeResolver
	transport *http.Transport
}

// NewProxy builds a proxy; vms serves the VMs whose actions act on their instance. With a nil
// resolver or TLS configuration every action that needs a node agent answers 503 with an
// explanation; state checks and dry runs still work.
func NewProxy(instances, vms rest.Getter, nodes NodeResolver, tlsConfig *tls.Config) *Proxy {
	p := &Proxy{instances: instances, vms: vms, nodes: nodes}
	if tlsConfig != nil {
		dialer := &net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}
		p.transport = &http.Transport{
			DialContext:         dialer.DialContext,
			TLSClientConfig:     tlsConfig,
			TLSHandshakeTimeout: 10 * time.Second,
			MaxIdleConnsPerHost: 2,
			IdleConnTimeout:     90 * time.Second,
		}
	}
	return p
}

// NewOptions returns the published kind of an action's subresource.
func NewOptions(a streams.Action) runtime.Object {
	switch a {
	case streams.ActionPause:
		return &kubevirtv1.PauseOptions{}
	case streams.ActionUnpause:
		return &kubevirtv1.UnpauseOptions{}
	case streams.ActionGuestOSInfo:
		return &kubevirtv1.VirtualMachineInstanceGuestAgentInfo{}
	case streams.ActionUserList:
		return &kubevirtv1.VirtualMachineInstanceGuestOSUserList{}
	case streams.ActionFileSystemList:
		return &kubevirtv1.VirtualMachineInstanceFileSystemList{}
	default:
		return &kubevirtv1.VirtualMachineInstance{}
	}
}

// Handler serves one action.
func (p *Proxy) Handler(a streams.Action) subresource.Handler {
	return p.handler(a, false)
}

// VMHandler serves a stream action on a VirtualMachine: on its instance, which has the VM's
// name (KubeVirt serves port forwarding on both).
func (p *Proxy) VMHandler(a streams.Action) subresource.Handler {
	return p.handler(a, true)
}

func (p *Proxy) handler(a streams.Action, ofVM bool) subresource.Handler {
	return subresource.HandlerFunc(func(w http.ResponseWriter, r *http.Request, namespace, name string) {
		if !subresource.RequireMethod(w, r, a.Method()) {
			return
		}
		var forward streams.ForwardedPort
		if a.TakesPort() {
			var err error
			if forward, err = forwardedPort(r.URL.Path, a); err != nil {
				subresource.WriteError(w, apierrors.NewBadRequest(err.Error()))
				return
			}
		}
		dryRun := false
		var unfreezeTimeout *metav1.Duration
		if a.IsStream() {
			if !httpstream.IsUpgradeRequest(r) {
				subresource.WriteError(w, apierrors.NewBadRequest(fmt.Sprintf(
					"%s is a WebSocket stream: send an upgrade request with subprotocol %s", a, streams.Subprotocol)))
				return
			}
		} else if a == streams.ActionScreenshot {
			// KubeVirt moves the mouse first when asked, to wake a screen saver; NativeVirt cannot.
			if v := r.URL.Query().Get("moveCursor"); v != "" && v != "false" {
				subresource.WriteError(w, apierrors.NewBadRequest(fmt.Sprintf(
					"moveCursor=%s is not supported by NativeVirt: take the screenshot with moveCursor=false", v)))
				return
			}
		} else if !a.IsQuery() {
			var body struct {
				DryRun []string `json:"dryRun,omitempty"`
				// UnfreezeTimeout is freeze's (KubeVirt's FreezeUnfreezeTimeout).
				UnfreezeTimeout *metav1.Duration `json:"unfreezeTimeout,omitempty"`
			}
			err := subresource.DecodeBody(r, &body)
			if err == nil {
				dryRun, err = subresource.DryRun(r, body.DryRun)
			}
			if err == nil && a == streams.ActionFreeze {
				unfreezeTimeout = body.UnfreezeTimeout
				err = checkUnfreezeTimeout(unfreezeTimeout)
			}
			if err != nil {
				subresource.WriteError(w, err)
				return
			}
		}
		ctx := genericapirequest.WithNamespace(r.Context(), namespace)
		if ofVM {
			// The VM must exist (404 otherwise); its instance has its name.
			if _, err := p.vms.Get(ctx, name, &metav1.GetOptions{}); err != nil {
				subresource.WriteError(w, err)
				return
			}
		}
		vmi, err := p.instance(ctx, name)
		if ofVM && apierrors.IsNotFound(err) {
			err = apierrors.NewConflict(kubevirtv1.Resource("virtualmachines"), name, fmt.Errorf("VM is not running"))
		}
		if err == nil {
			err = Check(a, vmi)
		}
		if err != nil {
			subresource.WriteError(w, err)
			return
		}
		if dryRun {
			subresource.WriteOK(w)
			return
		}
		target, err := p.target(ctx, vmi, a, forward)
		if err != nil {
			subresource.WriteError(w, err)
			return
		}
		if unfreezeTimeout != nil {
			target.RawQuery = url.Values{streams.UnfreezeTimeoutParam: {unfreezeTimeout.Duration.String()}}.Encode()
		}
		if a.IsStream() {
			p.stream(w, r, target, vmi)
			return
		}
		answer, contentType, err := p.call(ctx, a.Method(), target, vmi)
		if err != nil {
			subresource.WriteError(w, err)
			return
		}
		if a.IsQuery() {
			// The node agent's answer (KubeVirt's kind in JSON, or a PNG) goes to the caller as
			// it is.
			w.Header().Set("Content-Type", contentType)
			w.WriteHeader(http.StatusOK)
			_, _ = w.Write(answer)
			return
		}
		subresource.WriteOK(w)
	})
}

// checkUnfreezeTimeout checks freeze's body: KubeVirt's FreezeUnfreezeTimeout, whose
// unfreezeTimeout is required (0s: the guest stays frozen until unfreeze).
func checkUnfreezeTimeout(d *metav1.Duration) error {
	switch {
	case d == nil:
		return apierrors.NewBadRequest(`freeze needs a body {"unfreezeTimeout": "<duration>"}: the time after which the guest's file systems are thawed again if no unfreeze came first ("0s": never)`)
	case d.Duration < 0:
		return apierrors.NewBadRequest(fmt.Sprintf("unfreezeTimeout must not be negative, got %s", d.Duration))
	}
	return nil
}

func (p *Proxy) instance(ctx context.Context, name string) (*kubevirtv1.VirtualMachineInstance, error) {
	obj, err := p.instances.Get(ctx, name, &metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	vmi, ok := obj.(*kubevirtv1.VirtualMachineInstance)
	if !ok {
		return nil, apierrors.NewInternalError(fmt.Errorf("instance store returned %T", obj))
	}
	return vmi, nil
}

// forwardedPort reads the port and protocol that follow the action in a request path:
// .../portforward/{port} or .../portforward/{port}/{protocol}. Namespaces and names hold no
// slash, so the first "/portforward/" is the subresource.
func forwardedPort(path string, a streams.Action) (streams.ForwardedPort, error) {
	_, rest, found := strings.Cut(path, "/"+string(a)+"/")
	if !found {
		return streams.ForwardedPort{}, fmt.Errorf("%s needs a port: .../%s/{port} or .../%s/{port}/{protocol}", a, a, a)
	}
	return streams.ParseForwardedPort(strings.Split(rest, "/"))
}

// target resolves the node agent URL of the action.
func (p *Proxy) target(ctx context.Context, vmi *kubevirtv1.VirtualMachineInstance, a streams.Action, forward streams.ForwardedPort) (*url.URL, error) {
	if p.transport == nil || p.nodes == nil {
		return nil, apierrors.NewServiceUnavailable(notConfigured)
	}
	endpoint, err := p.nodes.Endpoint(ctx, vmi.Status.NodeName)
	if err != nil {
		return nil, err
	}
	t := streams.Target{Namespace: vmi.Namespace, Name: vmi.Name, Action: a, Forward: forward}
	return &url.URL{Scheme: "https", Host: endpoint, Path: t.Path()}, nil
}

// maxAnswer bounds a node agent's answer to a one-shot action (a guest agent's report, a
// screenshot).
const maxAnswer = 32 << 20

// call makes a one-shot action at the node agent and returns its answer, or the agent's
// refusal translated into an API error.
func (p *Proxy) call(ctx context.Context, method string, target *url.URL, vmi *kubevirtv1.VirtualMachineInstance) ([]byte, string, error) {
	ctx, cancel := context.WithTimeout(ctx, requestTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, target.String(), nil)
	if err != nil {
		return nil, "", apierrors.NewInternalError(err)
	}
	req.Header.Set(streams.VMIUIDHeader, string(vmi.UID))
	resp, err := p.transport.RoundTrip(req)
	if err != nil {
		return nil, "", apierrors.NewServiceUnavailable(fmt.Sprintf("node agent of node %s: %v", vmi.Status.NodeName, err))
	}
	defer func() { _ = resp.Body.Close() }()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswer+1))
	if err == nil && len(raw) > maxAnswer {
		err = fmt.Errorf("more than %d bytes", maxAnswer)
	}
	if err != nil {
		return nil, "", apierrors.NewServiceUnavailable(fmt.Sprintf("node agent of node %s: reading its answer: %v", vmi.Status.NodeName, err))
	}
	if resp.StatusCode/100 == 2 {
		return raw, resp.Header.Get("Content-Type"), nil
	}
	msg := strings.TrimSpace(string(raw))
	var st metav1.Status
	if json.Unmarshal(raw, &st) == nil && st.Kind == "Status" && st.Message != "" {
		msg = st.Message // the node agent's answer
	}
	gr := kubevirtv1.Resource("virtualmachineinstances")
	switch resp.StatusCode {
	case http.StatusConflict:
		return nil, "", apierrors.NewConflict(gr, vmi.Name, fmt.Errorf("%s", msg))
	case http.StatusNotFound:
		return nil, "", apierrors.NewConflict(gr, vmi.Name, fmt.Errorf("the node agent of node %s runs no domain for this VMI: %s", vmi.Status.NodeName, msg))
	default:
		return nil, "", apierrors.NewServiceUnavailable(fmt.Sprintf("node agent of node %s answered %s: %s", vmi.Status.NodeName, resp.Status, msg))
	}
}

// stream proxies the WebSocket upgrade to the node agent and then copies bytes both ways
// until either side closes. Only the WebSocket headers and the instance's uid go to the node
// agent; the caller's credentials stay here.
func (p *Proxy) stream(w http.ResponseWriter, r *http.Request, target *url.URL, vmi *kubevirtv1.VirtualMachineInstance) {
	out := r.Clone(r.Context())
	out.Header = forwardHeaders(r.Header)
	out.Header.Set(streams.VMIUIDHeader, string(vmi.UID))
	h := proxy.NewUpgradeAwareHandler(target, p.transport, false, true, responder{node: vmi.Status.NodeName})
	h.UseLocationHost = true
	h.ServeHTTP(w, out)
}

// forwardHeaders keeps what a WebSocket handshake needs.
func forwardHeaders(in http.Header) http.Header {
	out := http.Header{}
	for k, v := range in {
		ck := http.CanonicalHeaderKey(k)
		if ck == "Connection" || ck == "Upgrade" || ck == "Origin" || ck == "User-Agent" ||
			strings.HasPrefix(ck, "Sec-Websocket-") {
			out[ck] = append([]string(nil), v...)
		}
	}
	return out
}

// responder reports failures to reach the node agent before the connection was hijacked.
type responder struct{ node string }

func (rs responder) Error(w http.ResponseWriter, _ *http.Request, err error) {
	subresource.WriteError(w, apierrors.NewServiceUnavailable(fmt.Sprintf("node agent of node %s: %v", rs.node, err)))
}
