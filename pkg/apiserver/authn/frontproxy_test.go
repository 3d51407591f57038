package authn

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"math/big"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apiserver/pkg/authentication/authenticator"
	"k8s.io/apiserver/pkg/authentication/authenticatorfactory"
	"k8s.io/apiserver/pkg/authentication/request/headerrequest"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/server/dynamiccertificates"
	clocktesting "k8s.io/utils/clock/testing"
)

// testCA signs client certificates with keys of its kind.
type testCA struct {
	cert   *x509.Certificate
	key    crypto.Signer
	pool   *x509.CertPool
	newKey func() (crypto.Signer, error)
}

// ecdsaKey is the tests' key: quick to generate.
func ecdsaKey() (crypto.Signer, error) { return ecdsa.GenerateKey(elliptic.P256(), rand.Reader) }

func newTestCA(tb testing.TB, name string, newKey func() (crypto.Signer, error)) testCA {
	tb.Helper()
	key, err := newKey()
	if err != nil {
		tb.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: name},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign,
	}
	cert := createCert(tb, tmpl, tmpl, key.Public(), key)
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	return testCA{cert: cert, key: key, pool: pool, newKey: newKey}
}

// client issues a client certificate for cn, valid until notAfter.
func (ca testCA) client(tb testing.TB, cn string, notAfter time.Time) *x509.Certificate {
	tb.Helper()
	key, err := ca.newKey()
	if err != nil {
		tb.Fatal(err)
	}
	return createCert(tb, &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()),
		Subject:      pkix.Name{CommonName: cn},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     notAfter,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
		KeyUsage:     x509.KeyUsageDigitalSignature,
	}, ca.cert, key.Public(), ca.key)
}

func createCert(tb testing.TB, tmpl, parent *x509.Certificate, pub crypto.PublicKey, signer crypto.Signer) *x509.Certificate {
	tb.Helper()
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, pub, signer)
	if err != nil {
		tb.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		tb.Fatal(err)
	}
	return cert
}

// caSwitch is a CA content provider whose bundle a test replaces.
type caSwitch struct {
	dynamiccertificates.CAContentProvider
	opts atomic.Pointer[x509.VerifyOptions]
}

func (s *caSwitch) use(pool *x509.CertPool) {
	s.opts.Store(&x509.VerifyOptions{Roots: pool, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}})
}

func (s *caSwitch) VerifyOptions() (x509.VerifyOptions, bool) {
	opts := s.opts.Load()
	if opts == nil {
		return x509.VerifyOptions{}, false
	}
	return *opts, true
}

const frontProxyName = "front-proxy-client"

// fixture is a frontProxyCache on a fake clock that counts its verifications.
type fixture struct {
	cache    *frontProxyCache
	ca       *caSwitch
	clock    *clocktesting.FakePassiveClock
	verifies atomic.Int32
}

func newFixture(t *testing.T, ca testCA) *fixture {
	t.Helper()
	f := &fixture{ca: &caSwitch{}, clock: clocktesting.NewFakePassiveClock(time.Now())}
	f.ca.use(ca.pool)
	f.cache = newFrontProxyCache(requestHeaderConfig(f.ca), f.clock)
	f.cache.verify = func(leaf *x509.Certificate, opts x509.VerifyOptions) ([][]*x509.Certificate, error) {
		f.verifies.Add(1)
		opts.CurrentTime = f.clock.Now()
		return leaf.Verify(opts)
	}
	return f
}

func requestHeaderConfig(ca dynamiccertificates.CAContentProvider) *authenticatorfactory.RequestHeaderConfig {
	return &authenticatorfactory.RequestHeaderConfig{
		UsernameHeaders:     headerrequest.StaticStringSlice{"X-Remote-User"},
		UIDHeaders:          headerrequest.StaticStringSlice{"X-Remote-Uid"},
		GroupHeaders:        headerrequest.StaticStringSlice{"X-Remote-Group"},
		ExtraHeaderPrefixes: headerrequest.StaticStringSlice{"X-Remote-Extra-"},
		CAContentProvider:   ca,
		AllowedClientNames:  headerrequest.StaticStringSlice{frontProxyName},
	}
}

// proxied is a request kube-apiserver proxies for alice with cert (nil: no client certificate).
func proxied(cert *x509.Certificate) *http.Request {
	req, _ := http.NewRequest(http.MethodGet, "https://nativevirt/apis/kubevirt.io/v1", nil)
	req.Header.Set("X-Remote-User", "alice")
	req.Header.Add("X-Remote-Group", "devs")
	req.Header.Set("X-Remote-Extra-Scopes", "vms")
	if cert != nil {
		req.TLS = &tls.ConnectionState{PeerCertificates: []*x509.Certificate{cert}}
	}
	return req
}

func (f *fixture) authenticate(t *testing.T, req *http.Request) (user.Info, bool) {
	t.Helper()
	resp, ok, err := f.cache.AuthenticateRequest(req)
	if err != nil {
		t.Fatalf("the cache answers no errors (they are its delegate's to report), got %v", err)
	}
	if !ok {
		return nil, false
	}
	return resp.User, true
}

func TestVerifiedFrontProxyIsVerifiedOnce(t *testing.T) {
	ca := newTestCA(t, "front-proxy-ca", ecdsaKey)
	f := newFixture(t, ca)
	cert := ca.client(t, frontProxyName, time.Now().Add(12*time.Hour))

	for i := range 3 {
		got, ok := f.authenticate(t, proxied(cert))
		if !ok {
			t.Fatalf("request %d: not authenticated", i)
		}
		want := &user.DefaultInfo{Name: "alice", Groups: []string{"devs"}, Extra: map[string][]string{"scopes": {"vms"}}}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("request %d: user (-want +got):\n%s", i, diff)
		}
	}
	if n := f.verifies.Load(); n != 1 {
		t.Errorf("the chain was verified %d times for 3 requests, want 1", n)
	}

	// A minute later it is verified again.
	f.clock.SetTime(f.clock.Now().Add(verifiedTTL))
	if _, ok := f.authenticate(t, proxied(cert)); !ok {
		t.Fatal("not authenticated after the verdict expired")
	}
	if n := f.verifies.Load(); n != 2 {
		t.Errorf("verifications after the verdict expired: %d, want 2", n)
	}
}

func TestFrontProxyCacheLeavesTheRestToItsDelegate(t *testing.T) {
	ca := newTestCA(t, "front-proxy-ca", ecdsaKey)
	other := newTestCA(t, "client-ca", ecdsaKey)
	expiresSoon := time.Now().Add(30 * time.Second)
	tests := []struct {
		name string
		req  func() *http.Request // a new request each time: authentication clears its headers
	}{
		{"no TLS", func() *http.Request { return proxied(nil) }},
		{"a certificate of another CA", withCert(proxied, other.client(t, frontProxyName, time.Now().Add(time.Hour)))},
		{"a common name that is not allowed", withCert(proxied, ca.client(t, "mallory", time.Now().Add(time.Hour)))},
		{"no user header", withCert(func(cert *x509.Certificate) *http.Request {
			req := proxied(cert)
			req.Header.Del("X-Remote-User")
			return req
		}, ca.client(t, frontProxyName, time.Now().Add(time.Hour)))},
		{"a certificate that expired after it verified", withCert(proxied, ca.client(t, frontProxyName, expiresSoon))},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, ca)
			if tt.name == "a certificate that expired after it verified" {
				if _, ok := f.authenticate(t, tt.req()); !ok {
					t.Fatal("not authenticated while the certificate was valid")
				}
				f.clock.SetTime(expiresSoon.Add(time.Second))
			}
			if u, ok := f.authenticate(t, tt.req()); ok {
				t.Fatalf("authenticated as %v, want the request left to the delegate", u)
			}
			// Twice: a failed verification is remembered too, not repeated.
			before := f.verifies.Load()
			if u, ok := f.authenticate(t, tt.req()); ok {
				t.Fatalf("authenticated as %v the second time", u)
			}
			if n := f.verifies.Load() - before; n != 0 {
				t.Errorf("a rejected chain was verified again (%d times)", n)
			}
		})
	}
}

func withCert(req func(*x509.Certificate) *http.Request, cert *x509.Certificate) func() *http.Request {
	return func() *http.Request { return req(cert) }
}

func TestFrontProxyCacheFollowsANewCABundle(t *testing.T) {
	oldCA, newCA := newTestCA(t, "front-proxy-ca", ecdsaKey), newTestCA(t, "front-proxy-ca-2", ecdsaKey)
	f := newFixture(t, oldCA)
	oldCert := oldCA.client(t, frontProxyName, time.Now().Add(time.Hour))
	if _, ok := f.authenticate(t, proxied(oldCert)); !ok {
		t.Fatal("not authenticated with the first bundle")
	}

	f.ca.use(newCA.pool)
	if u, ok := f.authenticate(t, proxied(oldCert)); ok {
		t.Fatalf("a certificate of the replaced CA was still accepted (as %v)", u)
	}
	if _, ok := f.authenticate(t, proxied(newCA.client(t, frontProxyName, time.Now().Add(time.Hour)))); !ok {
		t.Fatal("a certificate of the new CA was not accepted")
	}

	f.ca.opts.Store(nil) // no bundle at all: nothing is a front proxy
	if u, ok := f.authenticate(t, proxied(oldCert)); ok {
		t.Fatalf("accepted as %v without a CA bundle", u)
	}
}

// recordingDelegate stands for the server's own authenticator.
type recordingDelegate struct{ calls int }

func (d *recordingDelegate) AuthenticateRequest(*http.Request) (*authenticator.Response, bool, error) {
	d.calls++
	return nil, false, errors.New("delegate: verifying certificate failed")
}

func TestWithVerifiedFrontProxies(t *testing.T) {
	ca := newTestCA(t, "front-proxy-ca", ecdsaKey)
	provider, err := dynamiccertificates.NewStaticCAContent("front-proxy-ca", pemOf(ca.cert))
	if err != nil {
		t.Fatal(err)
	}
	delegate := &recordingDelegate{}
	a := WithVerifiedFrontProxies(delegate, requestHeaderConfig(provider))

	resp, ok, err := a.AuthenticateRequest(proxied(ca.client(t, frontProxyName, time.Now().Add(time.Hour))))
	if err != nil || !ok {
		t.Fatalf("front proxy: ok=%v err=%v", ok, err)
	}
	if diff := cmp.Diff([]string{"devs", user.AllAuthenticated}, resp.User.GetGroups()); diff != "" {
		t.Errorf("groups (-want +got):\n%s", diff)
	}
	if delegate.calls != 0 {
		t.Errorf("the delegate was asked %d times for a verified front proxy", delegate.calls)
	}

	other := newTestCA(t, "client-ca", ecdsaKey)
	_, ok, err = a.AuthenticateRequest(proxied(other.client(t, frontProxyName, time.Now().Add(time.Hour))))
	if ok || err == nil || delegate.calls != 1 {
		t.Errorf("another CA's certificate: ok=%v err=%v delegate calls %d; want the delegate's error", ok, err, delegate.calls)
	}
}

func pemOf(cert *x509.Certificate) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: cert.Raw})
}
