package authn

import (
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"testing"
	"time"

	"k8s.io/apiserver/pkg/authentication/authenticator"
	"k8s.io/apiserver/pkg/authentication/request/headerrequest"
	"k8s.io/apiserver/pkg/server/dynamiccertificates"
)

// BenchmarkFrontProxyAuthentication compares k8s.io/apiserver's request-header authenticator,
// which verifies the front proxy's chain on every request, with the cache in front of it, for
// RSA-2048 certificates as kube-apiserver's front-proxy CA issues them.
func BenchmarkFrontProxyAuthentication(b *testing.B) {
	ca := newTestCA(b, "front-proxy-ca", func() (crypto.Signer, error) { return rsa.GenerateKey(rand.Reader, 2048) })
	cert := ca.client(b, frontProxyName, time.Now().Add(time.Hour))
	provider, err := dynamiccertificates.NewStaticCAContent("front-proxy-ca", pemOf(ca.cert))
	if err != nil {
		b.Fatal(err)
	}
	cfg := requestHeaderConfig(provider)
	uncached := headerrequest.NewDynamicVerifyOptionsSecure(cfg.CAContentProvider.VerifyOptions, cfg.AllowedClientNames,
		cfg.UsernameHeaders, cfg.UIDHeaders, cfg.GroupHeaders, cfg.ExtraHeaderPrefixes)
	for _, bb := range []struct {
		name string
		auth authenticator.Request
	}{
		{"verified every request", uncached},
		{"verified once a minute", WithVerifiedFrontProxies(uncached, cfg)},
	} {
		b.Run(bb.name, func(b *testing.B) {
			for b.Loop() {
				if _, ok, err := bb.auth.AuthenticateRequest(proxied(cert)); !ok || err != nil {
					b.Fatalf("ok=%v err=%v", ok, err)
				}
			}
		})
	}
}
