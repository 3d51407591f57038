package integration

import (
	"context"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
)

// TestControllerHotplug: a volume added to a running VM's template (addvolume on the VM) reaches
// its instance without a restart and leaves it on removevolume; a volume hotplugged into the
// instance alone stays there.
func TestControllerHotplug(t *testing.T) {
	env := startControllers(t)
	ctx := context.Background()
	const name = "vm-hot"
	env.createVM(name, kubevirtv1.RunStrategyAlways)
	env.eventually("the instance", func() (bool, error) { _, err := env.vmi(name); return err == nil, nil })
	first, _ := env.vmi(name)
	env.schedule(env.launcherPod(first.UID), "node1")
	env.eventually("Scheduled", func() (bool, error) {
		v, err := env.vmi(name)
		return err == nil && v.Status.Phase == kubevirtv1.Scheduled, err
	})
	// The node agent's part: the guest runs.
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		v, err := env.vmi(name)
		if err != nil {
			return err
		}
		v.Status.Phase = kubevirtv1.Running
		_, err = env.admin.KubevirtV1().VirtualMachineInstances(ns).UpdateStatus(ctx, v, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}

	put := func(resource, action, body string) {
		t.Helper()
		res := env.admin.KubevirtV1().RESTClient().Put().Namespace(ns).Resource(resource).Name(name).SubResource(action).
			SetHeader("Content-Type", "application/json").Body([]byte(body)).Do(ctx)
		var code int
		res.StatusCode(&code)
		if code != 202 {
			t.Fatalf("%s %s: %d %v", action, body, code, res.Error())
		}
	}
	hasVolume := func(vol string) func() (bool, error) {
		return func() (bool, error) {
			v, err := env.vmi(name)
			if err != nil {
				return false, err
			}
			got, disk := hotVolume(&v.Spec, vol)
			return got != nil && disk != nil, nil
		}
	}
	lacksVolume := func(vol string) func() (bool, error) {
		has := hasVolume(vol)
		return func() (bool, error) { ok, err := has(); return !ok && err == nil, err }
	}

	put("virtualmachines", "addvolume", addBody("data", "data-pvc", "scsi"))
	env.eventually("the VM's volume in the instance", hasVolume("data"))
	put("virtualmachineinstances", "addvolume", addBody("mine", "mine-pvc", "virtio"))
	env.eventually("the instance's own volume", hasVolume("mine"))

	env.eventually("the VM to observe its generation", func() (bool, error) {
		vm := env.vm(name)
		return vm.Status.ObservedGeneration == vm.Generation, nil
	})
	for _, c := range env.vm(name).Status.Conditions {
		if c.Type == kubevirtv1.VirtualMachineRestartRequired {
			t.Errorf("a hotplugged volume made the VM ask for a restart: %+v", c)
		}
	}
	if v, _ := env.vmi(name); v.UID != first.UID {
		t.Fatalf("the instance was replaced (%s, was %s)", v.UID, first.UID)
	}

	put("virtualmachines", "removevolume", `{"name":"data"}`)
	env.eventually("the VM's volume to leave the instance", lacksVolume("data"))
	if ok, _ := hasVolume("mine")(); !ok {
		t.Error("the instance's own hotplugged volume went with the VM's")
	}
}
