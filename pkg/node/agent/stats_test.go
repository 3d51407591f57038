package agent

import (
	"testing"

	"github.com/nativevirt/nativevirt/pkg/node/virt"
)

// TestDomainStats: the statistics of the attached domains, named by their VMIs.
func TestDomainStats(t *testing.T) {
	e := startRunning(t)
	if got := e.agent.DomainStats(t.Context()); len(got) != 1 || got[0].Name != vmName || got[0].Namespace != ns || got[0].UID != vmUID {
		t.Fatalf("stats %+v, want one entry for %s/%s", got, ns, vmName)
	}
	cpu := uint64(7)
	e.daemon.SetStats(domain, &virt.DomainStats{CPUTime: &cpu})
	got := e.agent.DomainStats(t.Context())
	if len(got) != 1 || got[0].Stats.CPUTime == nil || *got[0].Stats.CPUTime != 7 {
		t.Errorf("stats %+v, want the domain's CPU time 7", got)
	}
}
