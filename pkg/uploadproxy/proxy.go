// Package uploadproxy is CDI's upload proxy, served by nativevirt-apiserver on its own port
// (exposed outside the cluster by a NodePort Service): `virtctl image-upload` sends an image to
// one of CDI's upload paths with the token of an UploadTokenRequest; the proxy checks the token
// (package uploadtoken, the key the API server signs with), finds the upload server pod of the
// claim the token names, and streams the request to it.
package uploadproxy

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"
	"time"

	"k8s.io/klog/v2"

	"github.com/nativevirt/nativevirt/pkg/importer"
	"github.com/nativevirt/nativevirt/pkg/uploadtoken"
)

// Target is the upload server of a claim: its base URL and the secret it expects.
type Target struct {
	URL   *url.URL
	Token string
}

// ResolveFunc finds the upload server of the claim namespace/name. Its errors should be
// *Error, which say the status to answer.
type ResolveFunc func(ctx context.Context, namespace, name string) (Target, error)

// Error is a failure with the HTTP status the client gets.
type Error struct {
	Status int
	Msg    string
}

func (e *Error) Error() string { return e.Msg }

func errorf(status int, format string, args ...any) error {
	return &Error{Status: status, Msg: fmt.Sprintf(format, args...)}
}

// Proxy is the upload proxy's handler.
type Proxy struct {
	// Key verifies the tokens.
	Key uploadtoken.Key
	// Resolve finds the upload server of a claim.
	Resolve ResolveFunc
	// Transport reaches the upload servers (nil: http.DefaultTransport).
	Transport http.RoundTripper
	// Now is the clock tokens are checked against (nil: time.Now).
	Now func() time.Time
}

var _ http.Handler = &Proxy{}

// ServeHTTP answers /healthz, and HEAD, POST or PUT of CDI's upload paths.
func (p *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/healthz" {
		_, _ = io.WriteString(w, "OK")
		return
	}
	if ok, _ := importer.IsUploadPath(r.URL.Path); !ok {
		http.Error(w, fmt.Sprintf("%s is not an upload path: use /v1beta1/upload, /v1beta1/upload-async, /v1beta1/upload-form or /v1beta1/upload-form-async", r.URL.Path), http.StatusNotFound)
		return
	}
	// Browsers (web consoles posting the upload form) send a CORS preflight; the token, not the
	// origin, authorizes an upload.
	w.Header().Set("Access-Control-Allow-Origin", "*")
	switch r.Method {
	case http.MethodHead, http.MethodPost, http.MethodPut:
	case http.MethodOptions:
		w.Header().Set("Access-Control-Allow-Methods", "HEAD, POST, PUT, OPTIONS")
		w.Header().Set("Access-Control-Allow-Headers", "Authorization, Content-Type, Content-Length")
		w.WriteHeader(http.StatusOK)
		return
	default:
		w.Header().Set("Allow", "HEAD, POST, PUT, OPTIONS")
		http.Error(w, "method not allowed: use POST (or HEAD)", http.StatusMethodNotAllowed)
		return
	}
	target, err := p.target(r)
	if err != nil {
		status := http.StatusInternalServerError
		var e *Error
		if errors.As(err, &e) {
			status = e.Status
		}
		if r.Method != http.MethodHead {
			klog.FromContext(r.Context()).V(2).Info("Refused an upload", "status", status, "reason", err.Error())
		}
		http.Error(w, err.Error(), status)
		return
	}
	rp := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(target.URL)
			pr.Out.Header.Set("Authorization", "Bearer "+target.Token)
		},
		Transport:     p.Transport,
		FlushInterval: -1,
		ErrorHandler: func(w http.ResponseWriter, _ *http.Request, err error) {
			http.Error(w, "the upload server did not answer: "+err.Error(), http.StatusBadGateway)
		},
	}
	rp.ServeHTTP(w, r)
}

// target checks the request's token and finds the upload server of its claim.
func (p *Proxy) target(r *http.Request) (Target, error) {
	auth := r.Header.Get("Authorization")
	token, ok := strings.CutPrefix(auth, "Bearer ")
	if !ok || strings.TrimSpace(token) == "" {
		return Target{}, errorf(http.StatusUnauthorized, "missing upload token: send \"Authorization: Bearer <token>\" with the token of an UploadTokenRequest (upload.cdi.kubevirt.io)")
	}
	now := time.Now
	if p.Now != nil {
		now = p.Now
	}
	claims, err := p.Key.Verify(strings.TrimSpace(token), now())
	if err != nil {
		return Target{}, errorf(http.StatusUnauthorized, "%v: create a new UploadTokenRequest (tokens last %s)", err, uploadtoken.Lifetime)
	}
	if p.Resolve == nil {
		return Target{}, errorf(http.StatusServiceUnavailable, "the upload proxy cannot reach the cluster")
	}
	return p.Resolve(r.Context(), claims.Namespace, claims.Name)
}
