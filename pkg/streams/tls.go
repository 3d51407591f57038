package streams

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
)

// ServerTLSConfig is the node agent's TLS configuration: it serves certPEM/keyPEM
// and requires a client certificate that chains to caPEM and carries the common
// name APIServerCommonName (the apiserver) or HandlerCommonName (another node
// agent opening a migration tunnel). Which name may do what is decided per
// request: see ClientRole.
func ServerTLSConfig(caPEM, certPEM, keyPEM []byte) (*tls.Config, error) {
	pool, err := caPool(caPEM)
	if err != nil {
		return nil, err
	}
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return nil, fmt.Errorf("node agent serving certificate: %w", err)
	}
	return &tls.Config{
		MinVersion:   tls.VersionTLS12,
		Certificates: []tls.Certificate{cert},
		ClientAuth:   tls.RequireAndVerifyClientCert,
		ClientCAs:    pool,
		// The chain was verified against the node CA before this runs; the
		// name tells the apiserver and node agents apart.
		VerifyConnection: func(cs tls.ConnectionState) error {
			if len(cs.PeerCertificates) == 0 {
				return errors.New("no client certificate")
			}
			if ClientRole(cs.PeerCertificates) == "" {
				return fmt.Errorf("client certificate common name %q is neither %q nor %q",
					cs.PeerCertificates[0].Subject.CommonName, APIServerCommonName, HandlerCommonName)
			}
			return nil
		},
	}, nil
}

// ClientRole is the common name of a verified client certificate chain when it
// is one the node agent knows (APIServerCommonName or HandlerCommonName), ""
// otherwise.
func ClientRole(certs []*x509.Certificate) string {
	if len(certs) == 0 {
		return ""
	}
	switch cn := certs[0].Subject.CommonName; cn {
	case APIServerCommonName, HandlerCommonName:
		return cn
	}
	return ""
}

// ClientTLSConfig is the TLS configuration of a client of a node agent: the
// apiserver (certPEM/keyPEM with common name APIServerCommonName) or another
// node agent opening a migration tunnel (its own certificate, common name
// HandlerCommonName, which must allow client authentication). It accepts a
// serving certificate that chains to caPEM for server authentication.
//
// The host name is not checked: the endpoint comes from a Node annotation and
// may be any address of the node, while the dedicated node CA only certifies
// node agents (and the apiserver's client identity, which is refused here).
func ClientTLSConfig(caPEM, certPEM, keyPEM []byte) (*tls.Config, error) {
	pool, err := caPool(caPEM)
	if err != nil {
		return nil, err
	}
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return nil, fmt.Errorf("apiserver client certificate: %w", err)
	}
	return &tls.Config{
		MinVersion:   tls.VersionTLS12,
		Certificates: []tls.Certificate{cert},
		// Verification is done below, against the node CA, without a host name.
		InsecureSkipVerify: true, //nolint:gosec // replaced by VerifyConnection
		VerifyConnection: func(cs tls.ConnectionState) error {
			return verifyNodeAgent(pool, cs.PeerCertificates)
		},
	}, nil
}

func verifyNodeAgent(pool *x509.CertPool, certs []*x509.Certificate) error {
	if len(certs) == 0 {
		return errors.New("node agent presented no certificate")
	}
	inter := x509.NewCertPool()
	for _, c := range certs[1:] {
		inter.AddCert(c)
	}
	leaf := certs[0]
	if _, err := leaf.Verify(x509.VerifyOptions{
		Roots:         pool,
		Intermediates: inter,
		KeyUsages:     []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}); err != nil {
		return fmt.Errorf("node agent certificate: %w", err)
	}
	if leaf.Subject.CommonName == APIServerCommonName {
		return fmt.Errorf("node agent certificate has the apiserver's common name %q", APIServerCommonName)
	}
	return nil
}

func caPool(caPEM []byte) (*x509.CertPool, error) {
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(caPEM) {
		return nil, errors.New("node CA: no PEM certificate found")
	}
	return pool, nil
}
