// Package domains is the node agent's local informer of libvirt domains: a
// cache of what the agent knows about the domain of each VMI on the node (fed
// by libvirt lifecycle events and periodic resyncs), checkpointed to disk so
// that an agent that restarts re-attaches to running guests instead of
// defining or starting them again.
//
// One JSON file per VMI uid is written atomically (temporary file + rename)
// under the state directory; a torn or foreign file is ignored on load.
package domains

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"

	"github.com/nativevirt/nativevirt/pkg/node/virt"
)

// Record is what the agent knows about the domain of one VMI.
type Record struct {
	// UID of the VMI.
	UID types.UID `json:"uid"`
	// Namespace of the VMI.
	Namespace string `json:"namespace"`
	// Name of the VMI.
	Name string `json:"name"`
	// Domain is the libvirt domain name.
	Domain string `json:"domain"`
	// PodUID is the launcher pod running the domain.
	PodUID types.UID `json:"podUID,omitempty"`
	// Started is set once the agent started the domain: it is never started
	// again for this VMI (a VMI runs its guest once).
	Started bool `json:"started,omitempty"`
	// StartedAt is when the agent started the domain.
	StartedAt *time.Time `json:"startedAt,omitempty"`
	// ShutdownAt is when the agent first asked the guest to shut down.
	ShutdownAt *time.Time `json:"shutdownAt,omitempty"`
	// State is the last observed domain state ("" before the first).
	State virt.State `json:"state,omitempty"`
	// Reason is the reason of State.
	Reason virt.Reason `json:"reason,omitempty"`
	// Gone is set when the domain (or its launcher) disappeared.
	Gone bool `json:"gone,omitempty"`
	// Killed is set when the launcher shut the guest down although neither the VMI nor the
	// launcher pod was being deleted: the kubelet stopped the launcher on its own, after a
	// failed liveness probe.
	Killed bool `json:"killed,omitempty"`
}

// Key is the VMI's namespace/name.
func (r Record) Key() string { return r.Namespace + "/" + r.Name }

// Store is the checkpointed cache. The zero value is not usable: use Open.
type Store struct {
	dir     string
	mu      sync.Mutex
	records map[types.UID]Record
}

// Open loads the records checkpointed in dir (created if missing).
func Open(dir string) (*Store, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("domain checkpoint dir: %w", err)
	}
	s := &Store{dir: dir, records: map[types.UID]Record{}}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("reading domain checkpoints: %w", err)
	}
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".json") {
			continue
		}
		data, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			continue
		}
		var r Record
		if json.Unmarshal(data, &r) != nil || r.UID == "" || string(r.UID)+".json" != e.Name() {
			continue
		}
		s.records[r.UID] = r
	}
	return s, nil
}

// Get returns the record of uid.
func (s *Store) Get(uid types.UID) (Record, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.records[uid]
	return r, ok
}

// List returns every record, ordered by key.
func (s *Store) List() []Record {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Record, 0, len(s.records))
	for _, r := range s.records {
		out = append(out, r)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key() < out[j].Key() })
	return out
}

// Put stores r and checkpoints it when it changed; it reports whether it did.
func (s *Store) Put(r Record) (bool, error) {
	if r.UID == "" || strings.ContainsAny(string(r.UID), "/.") {
		return false, fmt.Errorf("invalid record uid %q", r.UID)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if old, ok := s.records[r.UID]; ok && reflect.DeepEqual(old, r) {
		return false, nil
	}
	data, err := json.Marshal(r)
	if err != nil {
		return false, err
	}
	tmp, err := os.CreateTemp(s.dir, ".tmp-*")
	if err != nil {
		return false, fmt.Errorf("checkpointing %s: %w", r.Key(), err)
	}
	_, werr := tmp.Write(data)
	serr := tmp.Sync()
	cerr := tmp.Close()
	if err := errors.Join(werr, serr, cerr); err != nil {
		_ = os.Remove(tmp.Name())
		return false, fmt.Errorf("checkpointing %s: %w", r.Key(), err)
	}
	if err := os.Rename(tmp.Name(), s.path(r.UID)); err != nil {
		_ = os.Remove(tmp.Name())
		return false, fmt.Errorf("checkpointing %s: %w", r.Key(), err)
	}
	s.records[r.UID] = r
	return true, nil
}

// Observe records an observed domain state for uid (if known) and reports
// whether it changed.
func (s *Store) Observe(uid types.UID, info virt.DomainInfo, gone bool) (bool, error) {
	r, ok := s.Get(uid)
	if !ok {
		return false, nil
	}
	r.State, r.Reason, r.Gone = info.State, info.Reason, gone
	return s.Put(r)
}

// Delete forgets uid.
func (s *Store) Delete(uid types.UID) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.records, uid)
	if err := os.Remove(s.path(uid)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return nil
}

func (s *Store) path(uid types.UID) string {
	return filepath.Join(s.dir, string(uid)+".json")
}
