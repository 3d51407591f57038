package fake

import (
	"fmt"
	"sync"

	"github.com/nativevirt/nativevirt/pkg/node/virt"
)

// MigrateHook plays one migration of the domain name: it may block (until the
// test lets it go or aborted is closed by AbortJob) and returns the outcome.
// On nil the domain leaves the daemon (undefined on the source, as
// virt.Migrator promises); after an abort the error is wrapped in
// virt.ErrAborted unless the hook returned nil anyway (the migration won the
// race). The hook may change the domain's state (SetState) to play an outcome
// libvirt could not confirm.
type MigrateHook func(name string, p virt.MigrateParams, aborted <-chan struct{}) error

// job is a migration in progress.
type job struct {
	aborted   chan struct{}
	abortOnce sync.Once
	stats     virt.JobStats
}

// SetJobStats sets what JobStats reports for the domain's running migration.
func (d *Daemon) SetJobStats(name string, st virt.JobStats) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if j, ok := d.jobs[name]; ok {
		st.Active = true
		j.stats = st
	}
}

// Migrating reports whether a migration of the domain runs.
func (d *Daemon) Migrating(name string) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	_, ok := d.jobs[name]
	return ok
}

// AddDomain puts a domain into the daemon as another daemon's migration
// would (the destination side), running, and emits an event.
func (d *Daemon) AddDomain(name string, xml []byte, st virt.State, reason virt.Reason) {
	d.mu.Lock()
	d.nextPID++
	d.domains[name] = &Domain{XML: append([]byte(nil), xml...), PID: d.nextPID,
		Info: virt.DomainInfo{Name: name, State: st, Reason: reason, UID: virt.MetadataUID(xml)}}
	d.mu.Unlock()
	d.emit(virt.Event{Domain: name})
}

// RemoveDomain drops a domain without a trace (libvirt cleaning up a failed
// incoming migration) and emits an event.
func (d *Daemon) RemoveDomain(name string) {
	d.mu.Lock()
	delete(d.domains, name)
	d.mu.Unlock()
	d.emit(virt.Event{Domain: name})
}

func (c migratorConn) Migrate(name string, p virt.MigrateParams) error {
	c.d.mu.Lock()
	c.d.calls = append(c.d.calls, "Migrate "+name)
	dom, ok := c.d.domains[name]
	switch {
	case c.d.dead:
		c.d.mu.Unlock()
		return fmt.Errorf("migrate %s: connection closed", name)
	case !ok:
		c.d.mu.Unlock()
		return fmt.Errorf("migrate %s: %w", name, virt.ErrNotFound)
	case !dom.Info.Active():
		c.d.mu.Unlock()
		return fmt.Errorf("migrate %s: domain is not running", name)
	case c.d.jobs[name] != nil:
		c.d.mu.Unlock()
		return fmt.Errorf("migrate %s: another job runs", name)
	}
	j := &job{aborted: make(chan struct{}), stats: virt.JobStats{Active: true}}
	c.d.jobs[name] = j
	hook := c.d.MigrateHook
	c.d.mu.Unlock()

	var err error
	if hook != nil {
		err = hook(name, p, j.aborted)
	}
	wasAborted := false
	select {
	case <-j.aborted:
		wasAborted = true
	default:
	}
	c.d.mu.Lock()
	delete(c.d.jobs, name)
	if err == nil {
		delete(c.d.domains, name)
	}
	c.d.mu.Unlock()
	c.d.emit(virt.Event{Domain: name})
	switch {
	case err == nil:
		return nil
	case wasAborted:
		return fmt.Errorf("migrate %s: %w: %v", name, virt.ErrAborted, err)
	}
	return fmt.Errorf("migrate %s: %w", name, err)
}

func (c migratorConn) JobStats(name string, completed bool) (virt.JobStats, error) {
	c.d.mu.Lock()
	defer c.d.mu.Unlock()
	if _, ok := c.d.domains[name]; !ok {
		return virt.JobStats{}, fmt.Errorf("job stats %s: %w", name, virt.ErrNotFound)
	}
	if completed {
		return virt.JobStats{}, nil
	}
	if j, ok := c.d.jobs[name]; ok {
		return j.stats, nil
	}
	return virt.JobStats{}, nil
}

func (c migratorConn) AbortJob(name string) error {
	c.d.mu.Lock()
	defer c.d.mu.Unlock()
	c.d.calls = append(c.d.calls, "AbortJob "+name)
	if _, ok := c.d.domains[name]; !ok {
		return fmt.Errorf("abort %s: %w", name, virt.ErrNotFound)
	}
	j, ok := c.d.jobs[name]
	if !ok {
		return fmt.Errorf("abort %s: no job is running", name)
	}
	j.abortOnce.Do(func() { close(j.aborted) })
	return nil
}
