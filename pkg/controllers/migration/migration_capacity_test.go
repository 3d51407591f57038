package migration

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
	"github.com/nativevirt/nativevirt/pkg/controllers/internal/loop"
)

// instanceOn is a running, migratable instance name on node, with its source pod.
func instanceOn(name, node string) []runtime.Object {
	vmi := newVMI()
	vmi.Name, vmi.UID, vmi.Status.NodeName = name, types.UID(name+"-uid"), node
	pod := source()
	pod.Name, pod.UID, pod.Spec.NodeName = name+"-source", types.UID(name+"-source-uid"), node
	pod.Labels[kubevirtv1.CreatedByLabel] = string(vmi.UID)
	pod.OwnerReferences[0].Name, pod.OwnerReferences[0].UID = name, vmi.UID
	return []runtime.Object{vmi, pod}
}

// TestLimits: at most ParallelMigrationsPerCluster migrations run at once and at most
// ParallelOutboundMigrationsPerNode leave one node; the others wait in Pending and start when
// a slot frees, with no target pod meanwhile.
func TestLimits(t *testing.T) {
	cfg := DefaultConfig()
	cfg.ParallelMigrationsPerCluster, cfg.ParallelOutboundMigrationsPerNode = 2, 1
	var objs []runtime.Object
	for i, node := range []string{"node-a", "node-a", "node-c", "node-d"} {
		name := fmt.Sprintf("vm%d", i+1)
		objs = append(objs, instanceOn(name, node)...)
		objs = append(objs, freshMig(fmt.Sprintf("m%d", i+1), name))
	}
	f := newFixture(t, cfg, objs...)

	f.step("m1", createPod, writeMigration)
	// The caches have not seen m1's pod nor its new phase yet: it counts all the same.
	if got, requeue := f.sync("m2"); !cmp.Equal(got, []string{writeMigration}) || requeue != capacityRetry {
		t.Fatalf("m2 (second from node-a): wrote %v requeue %s, want Pending and a retry", got, requeue)
	}
	f.step("m3", createPod, writeMigration)
	f.step("m4", writeMigration) // the cluster is full
	want := map[string]kubevirtv1.VirtualMachineInstanceMigrationPhase{
		"m1": kubevirtv1.MigrationScheduling, "m2": kubevirtv1.MigrationPending,
		"m3": kubevirtv1.MigrationScheduling, "m4": kubevirtv1.MigrationPending,
	}
	for name, phase := range want {
		if got := f.mig(name).Status.Phase; got != phase {
			t.Errorf("%s: phase %s, want %s", name, got, phase)
		}
	}
	if n := len(f.targetPods("m2-uid")) + len(f.targetPods("m4-uid")); n != 0 {
		t.Errorf("%d target pods for waiting migrations", n)
	}
	// Still full: waiting migrations write nothing more.
	f.step("m2")
	f.step("m4")

	// m1 fails (its target pod is deleted): a slot frees on node-a and in the cluster.
	if err := f.kube.CoreV1().Pods("default").Delete(t.Context(), f.targetPods("m1-uid")[0].Name, metaDelete()); err != nil {
		t.Fatal(err)
	}
	f.step("m1", writeMigration, patchMigration)
	f.c.queue = loop.New("test", f.c.sync)
	f.observe() // m1 is Failed now: m1 and the two waiting migrations are queued
	if got := f.c.queue.Len(); got != 3 {
		t.Errorf("%d keys queued when m1 ended, want 3 (m1, m2, m4)", got)
	}
	f.step("m2", createPod, writeMigration)
	f.step("m4") // m2 took the freed cluster slot
	if got := f.mig("m2").Status.Phase; got != kubevirtv1.MigrationScheduling {
		t.Errorf("m2: phase %s", got)
	}
}

func TestConfigValidate(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(*Config)
		ok     bool
	}{
		{name: "defaults", mutate: func(*Config) {}, ok: true},
		{name: "no migrations", mutate: func(c *Config) { c.ParallelMigrationsPerCluster = 0 }},
		{name: "no outbound", mutate: func(c *Config) { c.ParallelOutboundMigrationsPerNode = 0 }},
		{name: "no timeout", mutate: func(c *Config) { c.UnschedulableTimeout = 0 }},
	}
	for _, tc := range tests {
		c := DefaultConfig()
		tc.mutate(&c)
		if err := c.Validate(); (err == nil) != tc.ok {
			t.Errorf("%s: Validate() = %v", tc.name, err)
		}
	}
}
