package launcher

import (
	"errors"
	"fmt"
	"time"

	"k8s.io/klog/v2"
)

// shutdownPolicy is how the launcher stops its guests on SIGTERM.
type shutdownPolicy struct {
	// grace is the time the guests get to power off after the first ACPI power button press.
	grace time.Duration
	// poll is how often the domains are listed meanwhile.
	poll time.Duration
	// repress is how often the power button is pressed again: a guest still booting, or one
	// whose ACPI daemon is not up yet, misses the first press.
	repress time.Duration
}

// shutdownResult says how the guests went away.
type shutdownResult struct {
	// poweredOff are the domains that stopped by themselves within the grace period.
	poweredOff []string
	// destroyed are the domains still running after the grace period, then destroyed.
	destroyed []string
}

// shutdownGuests presses the ACPI power button of every running domain, waits up to the grace
// period for them to stop, and destroys those still running then. It fails when the daemon
// cannot be asked (it died) or a destroy fails.
func shutdownGuests(h Hypervisor, p shutdownPolicy, log klog.Logger) (shutdownResult, error) {
	var res shutdownResult
	doms, err := h.Domains()
	if err != nil {
		return res, err
	}
	running := activeNames(doms)
	if len(running) == 0 {
		return res, nil
	}
	start := time.Now()
	deadline := start.Add(p.grace)
	press := func() {
		for _, name := range running {
			if err := h.Shutdown(name); err != nil {
				log.Info("ACPI shutdown failed", "domain", name, "err", err)
			}
		}
	}
	log.Info("Shutting the guests down", "domains", running, "gracePeriod", p.grace)
	if p.grace > 0 {
		press()
	}
	lastPress := start
	for {
		stillRunning := running
		if time.Now().Before(deadline) {
			sleepUntil(time.Now().Add(p.poll), deadline)
		}
		doms, err := h.Domains()
		if err != nil {
			return res, err
		}
		active := map[string]bool{}
		for _, n := range activeNames(doms) {
			active[n] = true
		}
		running = running[:0:0]
		for _, n := range stillRunning {
			if active[n] {
				running = append(running, n)
			} else {
				log.Info("Guest powered off", "domain", n, "after", time.Since(start).Round(time.Millisecond))
				res.poweredOff = append(res.poweredOff, n)
			}
		}
		if len(running) == 0 {
			return res, nil
		}
		if !time.Now().Before(deadline) {
			break
		}
		if p.repress > 0 && time.Since(lastPress) >= p.repress {
			press()
			lastPress = time.Now()
		}
	}
	var errs []error
	for _, n := range running {
		log.Info("Grace period over, destroying", "domain", n, "gracePeriod", p.grace)
		if err := h.Destroy(n); err != nil {
			errs = append(errs, fmt.Errorf("destroying %s: %w", n, err))
			continue
		}
		res.destroyed = append(res.destroyed, n)
	}
	return res, errors.Join(errs...)
}

// activeNames are the names of the running domains.
func activeNames(doms []Domain) []string {
	var names []string
	for _, d := range doms {
		if d.Active {
			names = append(names, d.Name)
		}
	}
	return names
}

// sleepUntil sleeps until t, but not past limit.
func sleepUntil(t, limit time.Time) {
	if limit.Before(t) {
		t = limit
	}
	if d := time.Until(t); d > 0 {
		time.Sleep(d)
	}
}
