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

package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	instancetypev1beta1 "github.com/nativevirt/nativevirt/pkg/apis/instancetype/v1beta1"
	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
)

// TestInstancetypes: a VM that takes its vCPUs and memory from a cluster instance type and its
// CPU topology from a namespaced preference, as a KubeVirt user writes it. The API refuses a VM
// whose template conflicts with its instance type or that names one that does not exist; the
// controller captures both in ControllerRevisions owned by the VM, so a later edit of the
// instance type does not change the VM; and the guest sees what the instance type gives.
func TestInstancetypes(t *testing.T) {
	e := newCtrlEnv(t, "e2e-instancetype")
	f := &flow{ctrlEnv: e, cli: newNVCLI(t, e.c, e.ns)}
	ctx := context.Background()
	its := e.kv.InstancetypeV1beta1()

	// Cluster-scoped: named after the test's namespace so that runs never share one.
	itName := e.ns + "-c2m160"
	it := &instancetypev1beta1.VirtualMachineClusterInstancetype{
		ObjectMeta: metav1.ObjectMeta{Name: itName},
		Spec: instancetypev1beta1.VirtualMachineInstancetypeSpec{
			CPU:    instancetypev1beta1.CPUInstancetype{Guest: 2},
			Memory: instancetypev1beta1.MemoryInstancetype{Guest: resource.MustParse("160Mi")},
		},
	}
	if _, err := its.VirtualMachineClusterInstancetypes().Create(ctx, it, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = its.VirtualMachineClusterInstancetypes().Delete(context.Background(), itName, metav1.DeleteOptions{})
	})
	cores := instancetypev1beta1.Cores
	grace := int64(7)
	pref := &instancetypev1beta1.VirtualMachinePreference{
		ObjectMeta: metav1.ObjectMeta{Name: "cores", Namespace: e.ns},
		Spec: instancetypev1beta1.VirtualMachinePreferenceSpec{
			CPU:                                    &instancetypev1beta1.CPUPreferences{PreferredCPUTopology: &cores},
			Devices:                                &instancetypev1beta1.DevicePreferences{PreferredDiskBus: kubevirtv1.DiskBusVirtio},
			PreferredTerminationGracePeriodSeconds: &grace,
		},
	}
	if _, err := its.VirtualMachinePreferences(e.ns).Create(ctx, pref, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	// kubectl reaches them through aggregation, by KubeVirt's short names, and explains them.
	out, err := e.c.Kubectl("get", "vmcf", itName)
	if err != nil || !strings.Contains(out, itName) {
		t.Errorf("kubectl get vmcf %s: %v\n%s", itName, err, out)
	}
	out, err = e.c.Kubectl("get", "vmpref", "-n", e.ns)
	if err != nil || !strings.Contains(out, "cores") {
		t.Errorf("kubectl get vmpref: %v\n%s", err, out)
	}
	out, err = e.c.Kubectl("explain", "virtualmachineclusterinstancetype.spec.cpu.guest")
	if err != nil || !strings.Contains(out, "vCPU") {
		t.Errorf("kubectl explain virtualmachineclusterinstancetype.spec.cpu.guest: %v\n%s", err, out)
	}

	// Refused: a template that sets what the instance type sets, and a missing instance type.
	conflicting := e.demoVM(kubevirtv1.RunStrategyHalted)
	conflicting.Name = "vm-conflict"
	conflicting.Spec.Instancetype = &kubevirtv1.InstancetypeMatcher{Name: itName}
	_, err = e.kv.KubevirtV1().VirtualMachines(e.ns).Create(ctx, conflicting, metav1.CreateOptions{})
	expectInvalid(t, err, "spec.template.spec.domain.cpu.cores", "spec.template.spec.domain.memory")
	missing := instancetypeVM(e, "vm-missing", kubevirtv1.RunStrategyHalted)
	missing.Spec.Instancetype = &kubevirtv1.InstancetypeMatcher{Name: e.ns + "-nosuch"}
	_, err = e.kv.KubevirtV1().VirtualMachines(e.ns).Create(ctx, missing, metav1.CreateOptions{})
	expectInvalid(t, err, "spec.instancetype")
	if err != nil && !strings.Contains(err.Error(), "Failure to find instancetype") {
		t.Errorf("missing instance type: %v; want KubeVirt's \"Failure to find instancetype\"", err)
	}

	// Inferred, as KubeVirt does for a volume whose claim names its defaults by label.
	claim := &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: "labelled-disk", Namespace: e.ns, Labels: map[string]string{
			"instancetype.kubevirt.io/default-instancetype":      itName,
			"instancetype.kubevirt.io/default-instancetype-kind": "VirtualMachineClusterInstancetype",
			"instancetype.kubevirt.io/default-preference":        "cores",
			"instancetype.kubevirt.io/default-preference-kind":   "VirtualMachinePreference",
		}},
		Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Mi")}},
		},
	}
	if _, err := e.kube.CoreV1().PersistentVolumeClaims(e.ns).Create(ctx, claim, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	inferred := instancetypeVM(e, "vm-inferred", kubevirtv1.RunStrategyHalted)
	inferred.Spec.Template.Spec.Volumes[0].VolumeSource = kubevirtv1.VolumeSource{PersistentVolumeClaim: &kubevirtv1.PersistentVolumeClaimVolumeSource{
		PersistentVolumeClaimVolumeSource: corev1.PersistentVolumeClaimVolumeSource{ClaimName: claim.Name}}}
	root := inferred.Spec.Template.Spec.Volumes[0].Name
	inferred.Spec.Instancetype = &kubevirtv1.InstancetypeMatcher{InferFromVolume: root}
	inferred.Spec.Preference = &kubevirtv1.PreferenceMatcher{InferFromVolume: root}
	if got, err := e.kv.KubevirtV1().VirtualMachines(e.ns).Create(ctx, inferred, metav1.CreateOptions{}); err != nil {
		t.Errorf("a VM inferring from its claim: %v", err)
	} else if got.Spec.Instancetype == nil || got.Spec.Instancetype.Name != itName || got.Spec.Instancetype.InferFromVolume != "" ||
		got.Spec.Preference == nil || got.Spec.Preference.Name != "cores" || got.Spec.Preference.Kind != "VirtualMachinePreference" {
		t.Errorf("inferred matchers %+v, %+v; want %s and cores from the claim's labels", got.Spec.Instancetype, got.Spec.Preference, itName)
	}

	// The VM: no CPU or memory of its own.
	vm := instancetypeVM(e, "vm-sized", kubevirtv1.RunStrategyAlways)
	vm.Spec.Instancetype = &kubevirtv1.InstancetypeMatcher{Name: itName}
	vm.Spec.Preference = &kubevirtv1.PreferenceMatcher{Name: "cores", Kind: "VirtualMachinePreference"}
	created, err := e.kv.KubevirtV1().VirtualMachines(e.ns).Create(ctx, vm, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if k := created.Spec.Instancetype.Kind; k != "virtualmachineclusterinstancetype" {
		t.Errorf("spec.instancetype.kind defaulted to %q; want virtualmachineclusterinstancetype as KubeVirt", k)
	}
	var itRev, prefRev string
	f.waitFor("status.instancetypeRef and preferenceRef with their revisions", controllerTimeout, func() (bool, error) {
		v := e.vm(vm.Name)
		ir, pr := v.Status.InstancetypeRef, v.Status.PreferenceRef
		if ir == nil || ir.ControllerRevisionRef == nil || pr == nil || pr.ControllerRevisionRef == nil {
			return false, fmt.Errorf("instancetypeRef %+v, preferenceRef %+v", ir, pr)
		}
		itRev, prefRev = ir.ControllerRevisionRef.Name, pr.ControllerRevisionRef.Name
		return ir.Name == itName && pr.Name == "cores", nil
	})
	for _, name := range []string{itRev, prefRev} {
		rev, err := e.kube.AppsV1().ControllerRevisions(e.ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatalf("revision %s: %v", name, err)
		}
		if owner := metav1.GetControllerOf(rev); owner == nil || owner.UID != created.UID {
			t.Errorf("revision %s is owned by %+v; want the VM", name, owner)
		}
		t.Logf("revision %s: labels %v", name, rev.Labels)
	}

	running, _ := f.running(vm.Name, "")
	checkSized(t, running, itName)

	// virtctl expand's view of it, through kube-apiserver: the instance type and preference
	// applied, the matchers gone.
	expanded := &kubevirtv1.VirtualMachine{}
	if out := f.cli.run("expand", "--vm", vm.Name, "-o", "json"); json.Unmarshal([]byte(out), expanded) != nil ||
		expanded.Spec.Instancetype != nil || expanded.Spec.Template.Spec.Domain.CPU == nil ||
		expanded.Spec.Template.Spec.Domain.CPU.Cores != 2 {
		t.Errorf("nativevirt expand --vm %s:\n%s", vm.Name, out)
	}
	s := f.cli.console(running.Name)
	if s.expect(promptRE, bootTimeout, true) == nil {
		s.close()
		f.dump()
		t.Fatalf("no shell prompt on the console:\n%s", s.all())
	}
	s.send("echo cpus-$(grep -c ^processor /proc/cpuinfo)-end")
	if s.expect(regexp.MustCompile(`cpus-2-end`), time.Minute, false) == nil {
		t.Errorf("the guest does not see the instance type's 2 vCPUs:\n%s", s.all())
	}
	s.close()

	// The instance type changes; the VM keeps its revision across a restart.
	cur, err := its.VirtualMachineClusterInstancetypes().Get(ctx, itName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cur.Spec.CPU.Guest = 1
	if _, err := its.VirtualMachineClusterInstancetypes().Update(ctx, cur, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	// A template change of the running VM waits for a restart, and says so.
	if _, err := e.c.Kubectl("patch", "vm", vm.Name, "-n", e.ns, "--type=merge",
		"-p", `{"spec":{"template":{"metadata":{"annotations":{"e2e/changed":"yes"}}}}}`); err != nil {
		t.Fatal(err)
	}
	f.waitFor("RestartRequired on the VM", controllerTimeout, func() (bool, error) {
		return hasVMCondition(e.vm(vm.Name), kubevirtv1.VirtualMachineRestartRequired), nil
	})
	e.subresource(vm.Name, "restart")
	restarted, _ := f.running(vm.Name, running.UID)
	f.waitFor("RestartRequired gone after the restart", controllerTimeout, func() (bool, error) {
		return !hasVMCondition(e.vm(vm.Name), kubevirtv1.VirtualMachineRestartRequired), nil
	})
	checkSized(t, restarted, itName)
	if ref := e.vm(vm.Name).Status.InstancetypeRef; ref == nil || ref.ControllerRevisionRef == nil || ref.ControllerRevisionRef.Name != itRev {
		t.Errorf("after the instance type changed: instancetypeRef %+v; want revision %s kept", ref, itRev)
	}

	// The revisions go with the VM (their owner).
	if _, err := e.c.Kubectl("delete", "vm", vm.Name, "-n", e.ns, "--wait=false"); err != nil {
		t.Fatal(err)
	}
	f.goneWithPods(vm.Name, restarted.UID)
	f.waitFor("the VM's revisions garbage-collected", controllerTimeout, func() (bool, error) {
		_, err := e.kube.AppsV1().ControllerRevisions(e.ns).Get(ctx, itRev, metav1.GetOptions{})
		return apierrors.IsNotFound(err), err
	})
}

// instancetypeVM is the demo VM without CPU and memory, which an instance type gives it.
func instancetypeVM(e *ctrlEnv, name string, strategy kubevirtv1.VirtualMachineRunStrategy) *kubevirtv1.VirtualMachine {
	vm := e.demoVM(strategy)
	vm.Name = name
	vm.Spec.Template.Spec.Domain.CPU = nil
	vm.Spec.Template.Spec.Domain.Memory = nil
	// The preference's grace period applies where the template has none.
	vm.Spec.Template.Spec.TerminationGracePeriodSeconds = nil
	for i := range vm.Spec.Template.Spec.Domain.Devices.Disks {
		// The preference's preferredDiskBus fills the bus.
		vm.Spec.Template.Spec.Domain.Devices.Disks[i].Disk.Bus = ""
	}
	return vm
}

// checkSized checks an instance built from the test's instance type (2 vCPUs as cores, 160Mi) and
// preference (virtio disks, a grace period of 7 s), annotated with their names.
func checkSized(t *testing.T, vmi *kubevirtv1.VirtualMachineInstance, itName string) {
	t.Helper()
	d := vmi.Spec.Domain
	if d.CPU == nil || d.CPU.Cores != 2 || d.CPU.Sockets != 1 || d.CPU.Threads != 1 {
		t.Errorf("instance CPU %+v; want 2 cores, 1 socket, 1 thread", d.CPU)
	}
	if d.Memory == nil || d.Memory.Guest == nil || d.Memory.Guest.Cmp(resource.MustParse("160Mi")) != 0 {
		t.Errorf("instance memory %+v; want guest 160Mi", d.Memory)
	}
	for _, disk := range d.Devices.Disks {
		if disk.Disk == nil || disk.Disk.Bus != kubevirtv1.DiskBusVirtio {
			t.Errorf("disk %s: %+v; want the preference's virtio bus", disk.Name, disk.DiskDevice)
		}
	}
	if g := vmi.Spec.TerminationGracePeriodSeconds; g == nil || *g != 7 {
		t.Errorf("instance terminationGracePeriodSeconds %v; want the preference's 7", g)
	}
	if vmi.Annotations["kubevirt.io/cluster-instancetype-name"] != itName || vmi.Annotations["kubevirt.io/preference-name"] != "cores" {
		t.Errorf("instance annotations %v; want kubevirt.io/cluster-instancetype-name=%s, kubevirt.io/preference-name=cores", vmi.Annotations, itName)
	}
}

// expectInvalid checks that err is a 422 naming each field.
func expectInvalid(t *testing.T, err error, fields ...string) {
	t.Helper()
	var status apierrors.APIStatus
	if !apierrors.IsInvalid(err) || !errors.As(err, &status) {
		t.Errorf("got %v; want 422 Invalid naming %v", err, fields)
		return
	}
	named := map[string]bool{}
	for _, c := range status.Status().Details.Causes {
		named[c.Field] = true
	}
	for _, f := range fields {
		if !named[f] {
			t.Errorf("422 does not name %s: %v", f, err)
		}
	}
}

func hasVMCondition(vm *kubevirtv1.VirtualMachine, typ kubevirtv1.VirtualMachineConditionType) bool {
	for _, c := range vm.Status.Conditions {
		if c.Type == typ && c.Status == corev1.ConditionTrue {
			return true
		}
	}
	return false
}

// TestInstancetypeExample: artifacts/examples/vm-demo-instancetype.yaml, as a user applies it,
// gives a VM that runs with the example instance type's 2 vCPUs and 160Mi.
func TestInstancetypeExample(t *testing.T) {
	e := newCtrlEnv(t, "e2e-itexample")
	f := &flow{ctrlEnv: e, cli: newNVCLI(t, e.c, e.ns)}
	ctx := context.Background()
	file := filepath.Join(e.c.Root(), "artifacts", "examples", "vm-demo-instancetype.yaml")
	// The cluster-wide objects may be a user's own (make run's cluster): removed only if created here.
	_, errIt := e.kv.InstancetypeV1beta1().VirtualMachineClusterInstancetypes().Get(ctx, "demo.small", metav1.GetOptions{})
	_, errPref := e.kv.InstancetypeV1beta1().VirtualMachineClusterPreferences().Get(ctx, "demo.busybox", metav1.GetOptions{})
	t.Cleanup(func() {
		if apierrors.IsNotFound(errIt) {
			_ = e.kv.InstancetypeV1beta1().VirtualMachineClusterInstancetypes().Delete(context.Background(), "demo.small", metav1.DeleteOptions{})
		}
		if apierrors.IsNotFound(errPref) {
			_ = e.kv.InstancetypeV1beta1().VirtualMachineClusterPreferences().Delete(context.Background(), "demo.busybox", metav1.DeleteOptions{})
		}
	})
	if out, err := e.c.Kubectl("apply", "-n", e.ns, "-f", file); err != nil {
		t.Fatalf("kubectl apply -f %s: %v\n%s", file, err, out)
	}
	f.cli.run("start", "vm-sized")
	running, _ := f.running("vm-sized", "")
	if cpu := running.Spec.Domain.CPU; cpu == nil || cpu.Cores != 2 || cpu.Sockets != 1 {
		t.Errorf("instance CPU %+v; want the example's 2 vCPUs as cores", cpu)
	}
	if m := running.Spec.Domain.Memory; m == nil || m.Guest == nil || m.Guest.String() != "160Mi" {
		t.Errorf("instance memory %+v; want the example's 160Mi", m)
	}
	if _, err := e.c.Kubectl("delete", "vm", "vm-sized", "-n", e.ns, "--wait=false"); err != nil {
		t.Fatal(err)
	}
	f.goneWithPods("vm-sized", running.UID)
}
