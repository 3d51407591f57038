package agent

import (
	"context"
	"sort"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	"github.com/nativevirt/nativevirt/pkg/node/virt"
)

// VMIStats are the counters of one VMI's running domain on this node.
type VMIStats struct {
	Namespace, Name string
	UID             types.UID
	Stats           virt.DomainStats
}

// DomainStats reads the counters of every domain this agent reported running (the VMIs running
// on this node), sorted by namespace and name, with disks and interfaces named by the domain's
// details that its status read. A domain not reported running yet, or whose counters cannot be
// read (it is stopping, its launcher went away), is left out: a scrape reports what is there.
func (a *Agent) DomainStats(ctx context.Context) []VMIStats {
	attached := a.launchers.list()
	out := make([]VMIStats, 0, len(attached))
	for _, l := range attached {
		details := l.details.Load()
		if details == nil {
			continue
		}
		s, err := l.conn.Stats(l.domain)
		if err != nil {
			klog.FromContext(ctx).V(4).Info("No statistics", "domain", l.domain, "err", err)
			continue
		}
		ns, name, err := cache.SplitMetaNamespaceKey(l.key)
		if err != nil {
			continue
		}
		out = append(out, VMIStats{Namespace: ns, Name: name, UID: l.uid, Stats: s.Named(details)})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Namespace != out[j].Namespace {
			return out[i].Namespace < out[j].Namespace
		}
		return out[i].Name < out[j].Name
	})
	return out
}
