// Package expectations remembers the creations and deletions a controller has asked for but not
// yet seen in its informer cache. Until the cache has caught up, a controller must not act on
// the cache (it would create a second pod, or delete an instance twice); the informer event that
// carries the object clears the expectation. Expectations expire, so a lost event only delays.
package expectations

import (
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/resourceversion"
)

// DefaultTTL is how long an unobserved expectation blocks its key.
const DefaultTTL = 5 * time.Minute

// RecheckAfter is when a controller that skipped a key for an unsatisfied expectation looks at
// it again: normally the awaited event comes first, but should it never come (a lost watch
// event), the expired expectation must not leave the key alone until some unrelated change.
const RecheckAfter = DefaultTTL + time.Second

// Expectations tracks, per controller key, pending creations (a count) and deletions (by UID,
// so a repeated event is harmless).
type Expectations struct {
	mu      sync.Mutex
	ttl     time.Duration
	now     func() time.Time
	entries map[string]*entry
}

type entry struct {
	adds    int
	deletes map[types.UID]bool
	// version is the resourceVersion of the controller's own latest write of the key's object,
	// until the cache shows it.
	version string
	// seen is the newest resourceVersion of the key's object the cache has shown.
	seen  string
	since time.Time
}

// New returns empty expectations with DefaultTTL.
func New() *Expectations {
	return &Expectations{ttl: DefaultTTL, now: time.Now, entries: map[string]*entry{}}
}

func (e *Expectations) get(key string) *entry {
	en, ok := e.entries[key]
	if !ok {
		en = &entry{deletes: map[types.UID]bool{}}
		e.entries[key] = en
	}
	en.since = e.now()
	return en
}

// ExpectCreations records that n objects are being created for key.
func (e *Expectations) ExpectCreations(key string, n int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.get(key).adds += n
}

// CreationObserved records that one created object of key reached the cache (or that a
// creation failed and never will).
func (e *Expectations) CreationObserved(key string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if en, ok := e.entries[key]; ok && en.adds > 0 {
		en.adds--
	}
}

// ExpectDeletion records that the object uid of key is being deleted.
func (e *Expectations) ExpectDeletion(key string, uid types.UID) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.get(key).deletes[uid] = true
}

// DeletionObserved records that the cache shows uid being deleted or gone (or that the delete
// failed).
func (e *Expectations) DeletionObserved(key string, uid types.UID) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if en, ok := e.entries[key]; ok {
		delete(en.deletes, uid)
	}
}

// ExpectVersion records that the controller wrote the key's own object, which is now at
// resourceVersion rv: until the cache shows rv, the cached object is older than what the
// controller knows, and a sync would only repeat the write (and meet a conflict). Watches deliver
// every version in order, so the cache passes through rv. An empty rv expects nothing.
//
// The watch event of the write may beat the write's own response: a version the cache already
// showed (or passed) is not expected again.
func (e *Expectations) ExpectVersion(key, rv string) {
	if rv == "" {
		return
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if en, ok := e.entries[key]; ok && atLeast(en.seen, rv) {
		return
	}
	e.get(key).version = rv
}

// VersionObserved records that the cache holds the key's object at rv.
func (e *Expectations) VersionObserved(key, rv string) {
	if rv == "" {
		return
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	en, ok := e.entries[key]
	if !ok {
		en = &entry{deletes: map[types.UID]bool{}, since: e.now()}
		e.entries[key] = en
	}
	if !atLeast(en.seen, rv) {
		en.seen = rv
	}
	if en.version != "" && atLeast(rv, en.version) {
		en.version = ""
	}
}

// atLeast reports whether resourceVersion a is b or newer. Kubernetes' resourceVersions of one
// resource are comparable integers (resourceversion.CompareResourceVersion); anything else
// compares by equality only.
func atLeast(a, b string) bool {
	if a == "" || b == "" {
		return false
	}
	if c, err := resourceversion.CompareResourceVersion(a, b); err == nil {
		return c >= 0
	}
	return a == b
}

// Satisfied reports whether key may act on the cache: nothing pending (creations, deletions,
// its own object's version), or pending for longer than the TTL.
func (e *Expectations) Satisfied(key string) bool {
	return e.CreatesDeletesSatisfied(key) && e.VersionSatisfied(key)
}

// CreatesDeletesSatisfied reports whether no creation or deletion of key is pending (or they
// expired).
func (e *Expectations) CreatesDeletesSatisfied(key string) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	en, ok := e.entries[key]
	if !ok || (en.adds <= 0 && len(en.deletes) == 0) {
		return true
	}
	return e.now().Sub(en.since) > e.ttl
}

// VersionSatisfied reports whether the cache shows the key's object at least at the version the
// controller last wrote (or the expectation expired).
func (e *Expectations) VersionSatisfied(key string) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	en, ok := e.entries[key]
	if !ok || en.version == "" {
		return true
	}
	return e.now().Sub(en.since) > e.ttl
}

// Delete forgets key (its object is gone).
func (e *Expectations) Delete(key string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	delete(e.entries, key)
}
