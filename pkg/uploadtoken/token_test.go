package uploadtoken

import (
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func mustKey(t *testing.T) Key {
	t.Helper()
	k, err := NewKey()
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func TestIssueVerify(t *testing.T) {
	k := mustKey(t)
	now := time.Unix(1_800_000_000, 0)
	tok, err := k.Issue("ns", "disk", now)
	if err != nil {
		t.Fatal(err)
	}
	c, err := k.Verify(tok, now.Add(time.Minute))
	if err != nil {
		t.Fatalf("verify: %v", err)
	}
	if c.Namespace != "ns" || c.Name != "disk" || c.Expires-c.IssuedAt != int64(Lifetime/time.Second) {
		t.Errorf("claims %+v", c)
	}
	if err := k.VerifyFor(tok, "ns", "disk", now); err != nil {
		t.Errorf("VerifyFor the right claim: %v", err)
	}
	for _, other := range [][2]string{{"ns", "other"}, {"other", "disk"}} {
		if err := k.VerifyFor(tok, other[0], other[1], now); err == nil {
			t.Errorf("a token for ns/disk was accepted for %s/%s", other[0], other[1])
		}
	}
}

func TestVerifyRefuses(t *testing.T) {
	k := mustKey(t)
	now := time.Unix(1_800_000_000, 0)
	tok, err := k.Issue("ns", "disk", now)
	if err != nil {
		t.Fatal(err)
	}
	parts := strings.Split(tok, ".")
	none := base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"none","typ":"JWT"}`))
	forged := base64.RawURLEncoding.EncodeToString([]byte(`{"iss":"nativevirt-apiserver","aud":"upload.cdi.kubevirt.io","iat":1800000000,"nbf":1800000000,"exp":1900000000,"op":"Upload","namespace":"ns","name":"other"}`))
	cases := map[string]struct {
		token string
		key   Key
		at    time.Time
	}{
		"expired":         {tok, k, now.Add(Lifetime + time.Minute)},
		"not yet valid":   {tok, k, now.Add(-time.Hour)},
		"another key":     {tok, mustKey(t), now},
		"alg none":        {none + "." + parts[1] + ".", k, now},
		"changed payload": {parts[0] + "." + forged + "." + parts[2], k, now},
		"truncated":       {parts[0] + "." + parts[1], k, now},
		"garbage":         {"not a token", k, now},
		"empty":           {"", k, now},
		"no key":          {tok, Key{}, now},
	}
	for name, c := range cases {
		if _, err := c.key.Verify(c.token, c.at); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

func TestIssueRefusesEmptyNames(t *testing.T) {
	k := mustKey(t)
	if _, err := k.Issue("", "disk", time.Now()); err == nil {
		t.Error("a token without a namespace was issued")
	}
	if _, err := k.Issue("ns", "", time.Now()); err == nil {
		t.Error("a token without a claim was issued")
	}
}

func TestLoadKey(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "key")
	if err := os.WriteFile(good, []byte(strings.Repeat("k", MinKeyBytes)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	a, err := LoadKey(good)
	if err != nil {
		t.Fatal(err)
	}
	b, err := LoadKey(good)
	if err != nil {
		t.Fatal(err)
	}
	// Two servers loading the same file accept each other's tokens.
	now := time.Now()
	tok, err := a.Issue("ns", "disk", now)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.VerifyFor(tok, "ns", "disk", now); err != nil {
		t.Errorf("a token of a replica with the same key was refused: %v", err)
	}
	short := filepath.Join(dir, "short")
	if err := os.WriteFile(short, []byte("too short\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadKey(short); err == nil {
		t.Error("a short key was accepted")
	}
	if _, err := LoadKey(filepath.Join(dir, "missing")); err == nil {
		t.Error("a missing file was accepted")
	}
}
