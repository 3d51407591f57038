/*
Copyright The NativeVirt Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package faults

import (
	"fmt"
	"strings"
	"time"

	"github.com/nativevirt/nativevirt/test/e2e/framework"
)

const (
	// counterPeriod is how often each guest prints a tick on its console.
	counterPeriod = 500 * time.Millisecond
	// counterTimeout bounds the wait for a guest's next tick (many periods under TCG).
	counterTimeout = time.Minute
)

// counting waits until guest name has printed ticks on its console (read from its launcher
// pod's serial log on the host).
func (g *guests) counting(name string) {
	g.e.t.Helper()
	c := g.all[name].Counter
	g.e.waitFor("the counter on the console of "+name, bootTimeout, func() (bool, error) {
		m, err := c.Read()
		if err != nil {
			return false, err
		}
		return m.Ticks >= 3, fmt.Errorf("%d ticks", m.Ticks)
	})
}

// counterMarks reads every guest's console counter: where each stood before a fault.
func (g *guests) counterMarks() (map[string]framework.CounterMark, []string) {
	marks := map[string]framework.CounterMark{}
	var bad []string
	for _, name := range g.names() {
		m, err := g.all[name].Counter.Read()
		if err != nil {
			bad = append(bad, fmt.Sprintf("%s: reading its console before the fault: %v", name, err))
		}
		marks[name] = m
	}
	return marks, bad
}

// checkCounters reports every guest not in killed that did not keep running since marks, as
// its console shows: it waits for a tick printed after this call (the guest runs now, it is
// not frozen), then requires that the counter went on from the mark without a new boot, a step
// back or an uptime that stopped. It logs where each counter went.
func (g *guests) checkCounters(marks map[string]framework.CounterMark, killed map[string]bool) []string {
	var names []string
	now := map[string]int{}
	for _, name := range g.names() {
		if killed[name] {
			continue
		}
		names = append(names, name)
		m, _ := g.all[name].Counter.Read()
		now[name] = m.Ticks
	}
	_ = poll(counterTimeout, 200*time.Millisecond, func() (bool, error) {
		for _, name := range names {
			if m, _ := g.all[name].Counter.Read(); m.Ticks <= now[name] {
				return false, nil
			}
		}
		return true, nil
	})
	var bad, spans []string
	for _, name := range names {
		c := g.all[name].Counter
		m, err := c.Read()
		if err != nil {
			bad = append(bad, fmt.Sprintf("%s: reading its console: %v", name, err))
		}
		if m.Ticks <= now[name] {
			bad = append(bad, fmt.Sprintf("%s: no tick on its console within %s after the state converged: the guest does not run", name, counterTimeout))
		}
		span, err := c.KeptRunning(marks[name])
		if err != nil {
			bad = append(bad, fmt.Sprintf("%s: console counter %v", name, err))
		}
		spans = append(spans, name+" "+span)
	}
	g.e.t.Logf("console counters: %s", strings.Join(spans, "; "))
	return bad
}
