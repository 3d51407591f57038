package domains

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/types"

	"github.com/nativevirt/nativevirt/pkg/node/virt"
)

func TestCheckpointSurvivesReopen(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	recs := []Record{
		{UID: "u1", Namespace: "ns", Name: "a", Domain: "ns_a", PodUID: "p1", Started: true, StartedAt: &at},
		{UID: "u2", Namespace: "ns", Name: "b", Domain: "ns_b"},
	}
	for _, r := range recs {
		changed, err := s.Put(r)
		if err != nil || !changed {
			t.Fatalf("Put(%s) = %v, %v; want true, nil", r.UID, changed, err)
		}
	}
	if changed, err := s.Put(recs[0]); err != nil || changed {
		t.Errorf("Put of an unchanged record = %v, %v; want false, nil", changed, err)
	}
	if changed, err := s.Observe("u1", virt.DomainInfo{State: virt.StateRunning}, false); err != nil || !changed {
		t.Errorf("Observe = %v, %v; want true, nil", changed, err)
	}
	if changed, _ := s.Observe("unknown", virt.DomainInfo{State: virt.StateRunning}, false); changed {
		t.Error("Observe of an unknown uid changed something")
	}
	if err := s.Delete("u2"); err != nil {
		t.Fatal(err)
	}
	// Garbage next to the checkpoints is ignored.
	_ = os.WriteFile(filepath.Join(dir, "u9.json"), []byte("{torn"), 0o600)
	_ = os.WriteFile(filepath.Join(dir, "other.json"), []byte(`{"uid":"u1"}`), 0o600)

	reopened, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := recs[0]
	want.State = virt.StateRunning
	if diff := cmp.Diff([]Record{want}, reopened.List()); diff != "" {
		t.Errorf("records after reopen (-want +got):\n%s", diff)
	}
}

func TestPutRejectsBadUID(t *testing.T) {
	s, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, uid := range []string{"", "../x", "a/b"} {
		if _, err := s.Put(Record{UID: types.UID(uid)}); err == nil {
			t.Errorf("Put with uid %q succeeded", uid)
		}
	}
}
