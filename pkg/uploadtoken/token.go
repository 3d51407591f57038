// Package uploadtoken issues and verifies the tokens of CDI uploads: nativevirt-apiserver
// answers an UploadTokenRequest (upload.cdi.kubevirt.io) with one, the client (`virtctl
// image-upload`) sends it to the upload proxy as `Authorization: Bearer <token>`, and the proxy
// verifies it before accepting data for the claim it names.
//
// A token is a compact JWT signed with HMAC-SHA256 (alg HS256) under a key both sides hold,
// carrying the claim's namespace and name and a lifetime of five minutes (as CDI's). Only HS256
// is accepted: a token naming another algorithm ("none" among them) is refused. Every API server
// replica and the upload proxy must hold the same key (a Secret mounted as a file, see
// LoadKey); one generated at start-up (NewKey) serves a single replica only.
package uploadtoken

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"
)

// Lifetime is how long a token is valid after it is issued, as in CDI.
const Lifetime = 5 * time.Minute

// MinKeyBytes is the shortest key accepted: the size of the HMAC-SHA256 output.
const MinKeyBytes = 32

// Issuer and Audience name the token's issuer and intended receiver.
const (
	Issuer   = "nativevirt-apiserver"
	Audience = "upload.cdi.kubevirt.io"
)

// OperationUpload is the only operation tokens grant: uploading into a claim.
const OperationUpload = "Upload"

// leeway tolerates clock skew between the API server and the upload proxy.
const leeway = 30 * time.Second

// header is the one JOSE header tokens carry.
var header = base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"HS256","typ":"JWT"}`))

// Claims are what a token asserts.
type Claims struct {
	Issuer    string `json:"iss"`
	Audience  string `json:"aud"`
	IssuedAt  int64  `json:"iat"`
	NotBefore int64  `json:"nbf"`
	Expires   int64  `json:"exp"`
	// Operation is OperationUpload.
	Operation string `json:"op"`
	// Namespace and Name identify the claim (PersistentVolumeClaim) the upload goes to.
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
}

// Key signs and verifies tokens.
type Key struct {
	secret []byte
}

// NewKey generates a random key (for a single API server without --upload-token-key-file).
func NewKey() (Key, error) {
	b := make([]byte, MinKeyBytes)
	if _, err := rand.Read(b); err != nil {
		return Key{}, fmt.Errorf("generate upload token key: %w", err)
	}
	return Key{secret: b}, nil
}

// KeyFromBytes uses b (at least MinKeyBytes bytes) as the key.
func KeyFromBytes(b []byte) (Key, error) {
	if len(b) < MinKeyBytes {
		return Key{}, fmt.Errorf("upload token key has %d bytes, at least %d are required", len(b), MinKeyBytes)
	}
	return Key{secret: append([]byte(nil), b...)}, nil
}

// LoadKey reads a key from a file (e.g. a Secret's key mounted into the pod): its bytes with
// trailing white space removed, at least MinKeyBytes of them (`openssl rand -base64 48`
// writes a suitable one).
func LoadKey(path string) (Key, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return Key{}, fmt.Errorf("read upload token key: %w", err)
	}
	k, err := KeyFromBytes([]byte(strings.TrimRight(string(b), " \t\r\n")))
	if err != nil {
		return Key{}, fmt.Errorf("%s: %w", path, err)
	}
	return k, nil
}

// Issue returns a token granting an upload into the claim namespace/name from now on for
// Lifetime.
func (k Key) Issue(namespace, name string, now time.Time) (string, error) {
	if len(k.secret) == 0 {
		return "", errors.New("upload token key is not set")
	}
	if namespace == "" || name == "" {
		return "", errors.New("an upload token needs a namespace and a claim name")
	}
	payload, err := json.Marshal(Claims{
		Issuer: Issuer, Audience: Audience,
		IssuedAt: now.Unix(), NotBefore: now.Unix(), Expires: now.Add(Lifetime).Unix(),
		Operation: OperationUpload, Namespace: namespace, Name: name,
	})
	if err != nil {
		return "", err
	}
	signed := header + "." + base64.RawURLEncoding.EncodeToString(payload)
	return signed + "." + base64.RawURLEncoding.EncodeToString(k.sign(signed)), nil
}

// Verify checks a token's signature, issuer, audience, operation and validity at now, and
// returns its claims.
func (k Key) Verify(token string, now time.Time) (*Claims, error) {
	if len(k.secret) == 0 {
		return nil, errors.New("upload token key is not set")
	}
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		return nil, errors.New("malformed upload token")
	}
	if parts[0] != header {
		return nil, errors.New("upload token: unsupported header (only HS256 is accepted)")
	}
	sig, err := base64.RawURLEncoding.DecodeString(parts[2])
	if err != nil || !hmac.Equal(sig, k.sign(parts[0]+"."+parts[1])) {
		return nil, errors.New("upload token: invalid signature")
	}
	payload, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		return nil, errors.New("malformed upload token payload")
	}
	var c Claims
	if err := json.Unmarshal(payload, &c); err != nil {
		return nil, errors.New("malformed upload token payload")
	}
	switch {
	case c.Issuer != Issuer || c.Audience != Audience:
		return nil, errors.New("upload token: wrong issuer or audience")
	case c.Operation != OperationUpload:
		return nil, fmt.Errorf("upload token: operation %q is not %s", c.Operation, OperationUpload)
	case now.Add(leeway).Unix() < c.NotBefore:
		return nil, errors.New("upload token is not valid yet")
	case now.Add(-leeway).Unix() >= c.Expires:
		return nil, errors.New("upload token has expired")
	}
	return &c, nil
}

// VerifyFor verifies a token and that it grants an upload into the claim namespace/name.
func (k Key) VerifyFor(token, namespace, name string, now time.Time) error {
	c, err := k.Verify(token, now)
	if err != nil {
		return err
	}
	if c.Namespace != namespace || c.Name != name {
		return fmt.Errorf("upload token is for %s/%s, not %s/%s", c.Namespace, c.Name, namespace, name)
	}
	return nil
}

func (k Key) sign(s string) []byte {
	m := hmac.New(sha256.New, k.secret)
	m.Write([]byte(s))
	return m.Sum(nil)
}

// IsZero says whether k holds no key (the zero Key).
func (k Key) IsZero() bool { return len(k.secret) == 0 }
