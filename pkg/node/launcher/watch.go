package launcher

import (
	"time"
)

// domainWatch decides, from successive listings of the launcher's domains, when the virtual
// machine is gone and the launcher's job is over: once a domain has been seen running, the
// launcher ends when no domain runs any more and either none is defined (the node agent
// undefined it) or they have all stayed shut off for offGrace (a guest that powered off; the
// grace leaves room for the node agent to start it again, e.g. for a reset).
//
// Before any domain has run, nothing ends the launcher: the node agent has yet to start one.
type domainWatch struct {
	offGrace time.Duration

	seenRunning bool
	// offSince is when the domains were first seen all shut off; zero while one runs.
	offSince time.Time
}

// waiting tells whether every domain has been seen shut off and the launcher waits for the
// grace to pass: only a listing after it can end the launcher, so it lists them by polling.
func (w *domainWatch) waiting() bool { return !w.offSince.IsZero() }

// observe records one listing taken at now and reports whether the launcher is done.
func (w *domainWatch) observe(now time.Time, domains []Domain) bool {
	for _, d := range domains {
		if d.Active {
			w.seenRunning = true
			w.offSince = time.Time{}
			return false
		}
	}
	if !w.seenRunning {
		return false
	}
	if len(domains) == 0 {
		return true
	}
	if w.offSince.IsZero() {
		w.offSince = now
	}
	return now.Sub(w.offSince) >= w.offGrace
}
