package agent

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
	"github.com/nativevirt/nativevirt/pkg/node/virt"
)

// TestEvents: what `kubectl describe vmi` shows of a guest's life on the node, KubeVirt's
// virt-handler's events: defined and started, asked to shut down, stopped (and why, when it
// failed), and why a sync failed.
func TestEvents(t *testing.T) {
	e := startRunning(t)
	if diff := cmp.Diff([]string{
		"vm Normal Created: VirtualMachineInstance defined.",
		"vm Normal Started: VirtualMachineInstance started.",
	}, e.recorded()); diff != "" {
		t.Errorf("start (-want +got):\n%s", diff)
	}

	// A failed sync names its error; a conflict (the VMI changed meanwhile) is only retried.
	e.agent.instances.syncFailed(key, errors.New(`preparing disks: cloud-init volume ci: user data: reading secret ud: secrets "ud" not found`))
	e.agent.instances.syncFailed(key, apierrors.NewConflict(schema.GroupResource{Group: "kubevirt.io", Resource: "virtualmachineinstances"}, vmName, errors.New("modified")))
	e.agent.instances.syncFailed(ns+"/gone", errors.New("no VMI to record it on"))
	if diff := cmp.Diff([]string{
		`vm Warning SyncFailed: preparing disks: cloud-init volume ci: user data: reading secret ud: secrets "ud" not found`,
	}, e.recorded()); diff != "" {
		t.Errorf("failed syncs (-want +got):\n%s", diff)
	}

	e.daemon.SetState(domain, virt.StateShutoff, virt.ReasonCrashed)
	e.sync()
	if diff := cmp.Diff([]string{"vm Warning Stopped: The VirtualMachineInstance crashed."}, e.recorded()); diff != "" {
		t.Errorf("crash (-want +got):\n%s", diff)
	}
	if got := e.getVMI().Status.Phase; got != kubevirtv1.Failed {
		t.Errorf("phase %s, want Failed", got)
	}

	e2 := startRunning(t)
	e2.recorded()
	e2.daemon.SetState(domain, virt.StateShutoff, virt.ReasonShutdown)
	e2.sync()
	if diff := cmp.Diff([]string{"vm Normal Stopped: The VirtualMachineInstance was shut down."}, e2.recorded()); diff != "" {
		t.Errorf("shut down (-want +got):\n%s", diff)
	}

	// Deleting the VMI asks the guest to shut down, once (the fake guest powers off at once).
	e3 := startRunning(t)
	e3.recorded()
	e3.updateVMI(func(v *kubevirtv1.VirtualMachineInstance) {
		now := metav1.NewTime(e3.now)
		v.DeletionTimestamp = &now
	})
	e3.sync()
	e3.sync()
	if diff := cmp.Diff([]string{
		"vm Normal ShuttingDown: Signaled Graceful Shutdown (grace period 30 s)",
		"vm Normal Stopped: The VirtualMachineInstance was shut down.",
	}, e3.recorded()); diff != "" {
		t.Errorf("deletion (-want +got):\n%s", diff)
	}
}
