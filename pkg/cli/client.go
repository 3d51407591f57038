package cli

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/gorilla/websocket"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"

	"github.com/nativevirt/nativevirt/pkg/streams"
)

// subresourcesPath is virtctl's path of an action.
func subresourcesPath(namespace, resource, name, action string) string {
	return fmt.Sprintf("/apis/subresources.kubevirt.io/v1/namespaces/%s/%s/%s/%s",
		url.PathEscape(namespace), resource, url.PathEscape(name), action)
}

// client calls the subresources of one namespace: actions and reads through client-go's REST
// client for subresources.kubevirt.io/v1 (credentials, rate limits and errors as every
// client-go client has them), streams through a WebSocket dialed with the same credentials.
type client struct {
	cfg       *rest.Config
	rest      rest.Interface
	namespace string
}

// subresourcesGroupVersion is virtctl's API group of actions and streams.
var subresourcesGroupVersion = schema.GroupVersion{Group: "subresources.kubevirt.io", Version: "v1"}

func newClient(cfg *rest.Config, namespace string) (*client, error) {
	rc := rest.CopyConfig(cfg)
	rc.GroupVersion = &subresourcesGroupVersion
	rc.APIPath = "/apis"
	rc.NegotiatedSerializer = scheme.Codecs.WithoutConversion()
	if rc.UserAgent == "" {
		rc.UserAgent = rest.DefaultKubernetesUserAgent()
	}
	restClient, err := rest.RESTClientFor(rc)
	if err != nil {
		return nil, err
	}
	return &client{cfg: cfg, rest: restClient, namespace: namespace}, nil
}

// url joins the server address (which may carry a path prefix) and path.
func (c *client) url(path string, query url.Values) (*url.URL, error) {
	host := c.cfg.Host
	if !strings.Contains(host, "://") {
		host = "https://" + host
	}
	u, err := url.Parse(host)
	if err != nil {
		return nil, fmt.Errorf("server address %q: %w", c.cfg.Host, err)
	}
	u.Path = strings.TrimSuffix(u.Path, "/") + path
	u.RawQuery = query.Encode()
	return u, nil
}

// action is the request of an action (subresource path, e.g. "vnc/screenshot") on an object of
// resource in the client's namespace.
func (c *client) action(verb, resource, name, action string) *rest.Request {
	return c.rest.Verb(verb).Namespace(c.namespace).Resource(resource).Name(name).
		SubResource(strings.Split(action, "/")...)
}

// get reads a GET action's answer (accept: its media type).
func (c *client) get(ctx context.Context, resource, name, action, accept string, query url.Values) ([]byte, error) {
	req := c.action(http.MethodGet, resource, name, action).SetHeader("Accept", accept)
	for k, vs := range query {
		for _, v := range vs {
			req.Param(k, v)
		}
	}
	return do(ctx, req)
}

// put sends an action with a JSON options body (nil: no body).
func (c *client) put(ctx context.Context, resource, name, action string, body any) error {
	req := c.action(http.MethodPut, resource, name, action).SetHeader("Accept", "application/json")
	if body != nil {
		raw, err := json.Marshal(body)
		if err != nil {
			return err
		}
		req.SetHeader("Content-Type", "application/json").Body(raw)
	}
	_, err := do(ctx, req)
	return err
}

// send PUTs a JSON body to a path of subresources.kubevirt.io/v1 in the namespace (e.g.
// expand-vm-spec) and returns the answer.
func (c *client) send(ctx context.Context, resource string, body []byte) ([]byte, error) {
	return do(ctx, c.rest.Put().Namespace(c.namespace).Resource(resource).
		SetHeader("Content-Type", "application/json").SetHeader("Accept", "application/json").
		Body(body))
}

// do sends req and returns the answer's body. A refusal is the server's own message when the
// body is a Status: client-go makes up a generic one ("the server reported a conflict") when the
// answer, e.g. the node agent's, does not come as the media type it asked for.
func do(ctx context.Context, req *rest.Request) ([]byte, error) {
	raw, err := req.Do(ctx).Raw()
	if err == nil {
		return raw, nil
	}
	var st metav1.Status
	if len(raw) > 0 && json.Unmarshal(raw, &st) == nil && st.Message != "" {
		return nil, fmt.Errorf("%s (%d %s)", st.Message, st.Code, st.Reason)
	}
	return nil, err
}

// statusError turns an error response into the server's message.
func statusError(resp *http.Response) error {
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, 64*1024))
	var st metav1.Status
	if json.Unmarshal(raw, &st) == nil && st.Message != "" {
		return fmt.Errorf("%s (%d %s)", st.Message, resp.StatusCode, st.Reason)
	}
	msg := strings.TrimSpace(string(raw))
	if msg == "" {
		msg = resp.Status
	}
	return fmt.Errorf("server answered %d: %s", resp.StatusCode, msg)
}

// dial opens a console or vnc stream of an instance, authenticated like every other request
// of the kubeconfig (tokens, client certificates, exec plugins, impersonation).
func (c *client) dial(ctx context.Context, name string, action streams.Action) (*websocket.Conn, error) {
	return c.dialStream(ctx, "virtualmachineinstances", name, string(action), string(action))
}

// dialStream opens the stream subresource at .../resource/name/subpath; what names it in errors.
func (c *client) dialStream(ctx context.Context, resource, name, subpath, what string) (*websocket.Conn, error) {
	u, err := c.url(subresourcesPath(c.namespace, resource, name, subpath), nil)
	if err != nil {
		return nil, err
	}
	tlsConfig, err := rest.TLSConfigFor(c.cfg)
	if err != nil {
		return nil, err
	}
	d := &wsDialer{tls: tlsConfig}
	rt, err := rest.HTTPWrappersForConfig(c.cfg, d)
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, err
	}
	resp, err := rt.RoundTrip(req)
	if err != nil {
		if resp != nil && resp.StatusCode >= 300 {
			return nil, statusError(resp)
		}
		return nil, fmt.Errorf("connecting to the %s of %s: %w", what, name, err)
	}
	return d.conn, nil
}

// wsDialer is the innermost round tripper of a stream: client-go's wrappers add the
// credentials to the request, then it performs the WebSocket handshake with them.
type wsDialer struct {
	tls  *tls.Config
	conn *websocket.Conn
}

// RoundTrip dials the WebSocket; on success the connection is kept in d.conn.
func (d *wsDialer) RoundTrip(req *http.Request) (*http.Response, error) {
	conn, resp, err := streams.Dial(req.Context(), req.URL.String(), d.tls, req.Header)
	if err != nil {
		return resp, err
	}
	d.conn = conn
	return resp, nil
}
