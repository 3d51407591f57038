package importer

import (
	"crypto/tls"
	"crypto/x509"
	"net/http"
	"time"
)

// newTransport returns the HTTP transport of a download. caCerts (PEM), when set, are trusted
// for TLS: instead of the system's roots, or in addition to them with withSystemRoots.
// skipVerify does not verify the server's certificate at all (an insecure registry).
func newTransport(caCerts []byte, withSystemRoots, skipVerify bool) (*http.Transport, error) {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.ResponseHeaderTimeout = time.Minute
	if len(caCerts) == 0 && !skipVerify {
		return t, nil
	}
	// InsecureSkipVerify only for registries an administrator listed as insecure.
	cfg := &tls.Config{MinVersion: tls.VersionTLS12, InsecureSkipVerify: skipVerify}
	if len(caCerts) > 0 {
		pool := x509.NewCertPool()
		if withSystemRoots {
			if sys, err := x509.SystemCertPool(); err == nil {
				pool = sys
			}
		}
		if !pool.AppendCertsFromPEM(caCerts) {
			return nil, permanentf("the certConfigMap holds no PEM certificate")
		}
		cfg.RootCAs = pool
	}
	t.TLSClientConfig = cfg
	return t, nil
}
