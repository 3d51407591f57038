package migration

import (
	"fmt"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/tools/cache"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
)

// capacity says why migration m may not start now ("" when it may): at most
// ParallelMigrationsPerCluster migrations run in the cluster and at most
// ParallelOutboundMigrationsPerNode leave one node. A migration runs from the creation of its
// target pod until it is final. Call with startMu held.
func (c *Controller) capacity(m *kubevirtv1.VirtualMachineInstanceMigration, vmi *kubevirtv1.VirtualMachineInstance) string {
	all, err := c.migLister.List(labels.Everything())
	if err != nil {
		return "the migration cache cannot be listed: " + err.Error()
	}
	cluster, outbound := 0, 0
	for _, o := range all {
		if o.UID == m.UID || isFinal(o.Status.Phase) {
			continue
		}
		if phaseOrder[o.Status.Phase] < phaseOrder[kubevirtv1.MigrationScheduling] && !c.starting[cache.MetaObjectToName(o).String()] {
			continue
		}
		cluster++
		if ovmi, err := c.vmiLister.VirtualMachineInstances(o.Namespace).Get(o.Spec.VMIName); err == nil &&
			ovmi.Status.NodeName == vmi.Status.NodeName {
			outbound++
		}
	}
	switch {
	case cluster >= c.cfg.ParallelMigrationsPerCluster:
		return fmt.Sprintf("%d migrations run in the cluster, the limit", cluster)
	case outbound >= c.cfg.ParallelOutboundMigrationsPerNode:
		return fmt.Sprintf("%d migrations leave node %s, the limit", outbound, vmi.Status.NodeName)
	}
	return ""
}

// otherInFlight names another unfinished migration of the instance that goes first, or "": the
// one the instance's unfinished migrationState names (already handed off), else one further
// along than m, or as far along and older. Of two migrations created together, one proceeds.
func (c *Controller) otherInFlight(m *kubevirtv1.VirtualMachineInstanceMigration, vmi *kubevirtv1.VirtualMachineInstance) string {
	if ms := vmi.Status.MigrationState; ms != nil && ms.MigrationUID != m.UID && !ms.Completed {
		if objs, err := c.migIndexer.ByIndex(byUID, string(ms.MigrationUID)); err == nil && len(objs) > 0 {
			if o, ok := objs[0].(*kubevirtv1.VirtualMachineInstanceMigration); ok && !isFinal(o.Status.Phase) {
				return string(o.UID)
			}
		}
	}
	objs, err := c.migIndexer.ByIndex(byVMI, m.Namespace+"/"+m.Spec.VMIName)
	if err != nil {
		return ""
	}
	for _, obj := range objs {
		o, ok := obj.(*kubevirtv1.VirtualMachineInstanceMigration)
		if !ok || o.UID == m.UID || isFinal(o.Status.Phase) {
			continue
		}
		if goesFirst(o, m) {
			return string(o.UID)
		}
	}
	return ""
}

// goesFirst reports whether migration a has precedence over b: further along, else older, else
// first by name.
func goesFirst(a, b *kubevirtv1.VirtualMachineInstanceMigration) bool {
	if ra, rb := phaseOrder[a.Status.Phase], phaseOrder[b.Status.Phase]; ra != rb {
		return ra > rb
	}
	if !a.CreationTimestamp.Equal(&b.CreationTimestamp) {
		return a.CreationTimestamp.Before(&b.CreationTimestamp)
	}
	return a.Name < b.Name
}
