// Package authn holds NativeVirt's additions to k8s.io/apiserver's delegated authentication.
//
// kube-apiserver proxies every aggregated request to nativevirt-apiserver over a long-lived TLS
// connection, authenticated by its front-proxy client certificate and the user named in the
// X-Remote-User headers. k8s.io/apiserver verifies that certificate's chain (an RSA signature
// check) on every request, although the connection and its certificate stay the same: on a GET
// that was about a tenth of the server's CPU. WithVerifiedFrontProxies remembers each chain that
// verified, for a short time and never beyond its certificates' validity, and answers such
// requests from the headers without verifying again.
package authn

import (
	"crypto/sha256"
	"crypto/x509"
	"net/http"
	"slices"
	"time"

	"k8s.io/apiserver/pkg/authentication/authenticator"
	"k8s.io/apiserver/pkg/authentication/authenticatorfactory"
	"k8s.io/apiserver/pkg/authentication/group"
	"k8s.io/apiserver/pkg/authentication/request/headerrequest"
	"k8s.io/apiserver/pkg/authentication/request/union"
	"k8s.io/utils/clock"
	"k8s.io/utils/lru"
)

// Defaults of WithVerifiedFrontProxies: a verified chain is trusted again for a minute; the
// cache holds as many chains as there are front proxies with changing certificates, a handful.
const (
	verifiedTTL  = time.Minute
	verifiedSize = 64
)

// WithVerifiedFrontProxies returns an authenticator that answers requests carrying a front-proxy
// client certificate whose chain verified recently against the current front-proxy CA bundle
// (and whose common name is allowed), from the request headers as k8s.io/apiserver's
// request-header authenticator does; every other request, and every certificate not yet
// verified or that failed, goes to delegate (the server's authenticator, which verifies it and
// reports why it fails). A chain is remembered per CA bundle: a new bundle verifies every
// certificate again.
//
// delegate must already hold the request-header authenticator built from cfg, first, as
// k8s.io/apiserver's DelegatingAuthenticatorConfig builds it: this one only spares it work and
// never answers differently.
func WithVerifiedFrontProxies(delegate authenticator.Request, cfg *authenticatorfactory.RequestHeaderConfig) authenticator.Request {
	return union.New(group.NewAuthenticatedGroupAdder(newFrontProxyCache(cfg, clock.RealClock{})), delegate)
}

// frontProxyCache authenticates requests of recently verified front proxies.
type frontProxyCache struct {
	verifyOptions func() (x509.VerifyOptions, bool)
	allowedNames  headerrequest.StringSliceProvider
	headers       authenticator.Request
	clock         clock.PassiveClock
	ttl           time.Duration
	// verify checks a leaf certificate (x509.Certificate.Verify; tests count the calls).
	verify   func(leaf *x509.Certificate, opts x509.VerifyOptions) ([][]*x509.Certificate, error)
	verified *lru.Cache // chainKey -> verdict
}

var _ authenticator.Request = &frontProxyCache{}

// chainKey names a presented certificate chain verified against one CA bundle. The pool is
// compared by identity: the CA content providers hand out the same pool until the bundle
// changes, and the key keeps a replaced pool from being reused at the same address.
type chainKey struct {
	roots *x509.CertPool
	chain [sha256.Size]byte
}

// verdict is what verifying a chain found, valid until expires.
type verdict struct {
	ok      bool
	expires time.Time
}

func newFrontProxyCache(cfg *authenticatorfactory.RequestHeaderConfig, c clock.PassiveClock) *frontProxyCache {
	return &frontProxyCache{
		verifyOptions: cfg.CAContentProvider.VerifyOptions,
		allowedNames:  cfg.AllowedClientNames,
		headers:       headerrequest.NewDynamic(cfg.UsernameHeaders, cfg.UIDHeaders, cfg.GroupHeaders, cfg.ExtraHeaderPrefixes),
		clock:         c,
		ttl:           verifiedTTL,
		verify:        (*x509.Certificate).Verify,
		verified:      lru.New(verifiedSize),
	}
}

// AuthenticateRequest answers (nil, false, nil) for whatever it leaves to the delegate.
func (c *frontProxyCache) AuthenticateRequest(req *http.Request) (*authenticator.Response, bool, error) {
	if req.TLS == nil || len(req.TLS.PeerCertificates) == 0 {
		return nil, false, nil
	}
	opts, ok := c.verifyOptions()
	if !ok || !c.verifiedChain(req.TLS.PeerCertificates, opts) {
		return nil, false, nil
	}
	if names := c.allowedNames.Value(); len(names) > 0 && !slices.Contains(names, req.TLS.PeerCertificates[0].Subject.CommonName) {
		return nil, false, nil
	}
	return c.headers.AuthenticateRequest(req)
}

// verifiedChain says whether certs (leaf first) verify against opts, from the cache when a
// verdict of the same chain and CA bundle has not expired. Failures are remembered too, so that
// a client certificate of another CA is verified once here, not on each of its requests.
func (c *frontProxyCache) verifiedChain(certs []*x509.Certificate, opts x509.VerifyOptions) bool {
	key := chainKey{roots: opts.Roots, chain: chainSum(certs)}
	now := c.clock.Now()
	if v, found := c.verified.Get(key); found && now.Before(v.(verdict).expires) {
		return v.(verdict).ok
	}
	if opts.Intermediates == nil && len(certs) > 1 {
		opts.Intermediates = x509.NewCertPool()
		for _, intermediate := range certs[1:] {
			opts.Intermediates.AddCert(intermediate)
		}
	}
	chains, err := c.verify(certs[0], opts)
	v := verdict{ok: err == nil, expires: now.Add(c.ttl)}
	if v.ok {
		if until := validUntil(chains); until.Before(v.expires) {
			v.expires = until
		}
	}
	c.verified.Add(key, v)
	return v.ok
}

// chainSum hashes the DER of each certificate, each prefixed by its length.
func chainSum(certs []*x509.Certificate) [sha256.Size]byte {
	h := sha256.New()
	for _, cert := range certs {
		n := len(cert.Raw)
		h.Write([]byte{byte(n >> 24), byte(n >> 16), byte(n >> 8), byte(n)})
		h.Write(cert.Raw)
	}
	var sum [sha256.Size]byte
	h.Sum(sum[:0])
	return sum
}

// validUntil is the latest time at which one of chains still has every certificate valid.
func validUntil(chains [][]*x509.Certificate) time.Time {
	var latest time.Time
	for _, chain := range chains {
		if len(chain) == 0 {
			continue
		}
		until := chain[0].NotAfter
		for _, cert := range chain[1:] {
			if cert.NotAfter.Before(until) {
				until = cert.NotAfter
			}
		}
		if until.After(latest) {
			latest = until
		}
	}
	return latest
}
