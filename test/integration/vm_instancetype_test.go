package integration

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/nativevirt/nativevirt/pkg/apis/instancetype/v1beta1"
	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
	"github.com/nativevirt/nativevirt/test/integration/framework"
)

// TestVMAdmissionWithInstancetypes: the API server checks a VirtualMachine against the instance
// type and preference it names, as KubeVirt's admission webhook does: both must exist, the
// template may not set what the instance type sets, and the completed template must be a valid
// instance.
func TestVMAdmissionWithInstancetypes(t *testing.T) {
	srv := framework.Start(t, "")
	cs := srv.Clientset(t)
	ctx := context.Background()
	vms := cs.KubevirtV1().VirtualMachines("default")

	it := &v1beta1.VirtualMachineClusterInstancetype{
		ObjectMeta: metav1.ObjectMeta{Name: "u1.small"},
		Spec: v1beta1.VirtualMachineInstancetypeSpec{
			CPU:    v1beta1.CPUInstancetype{Guest: 2},
			Memory: v1beta1.MemoryInstancetype{Guest: resource.MustParse("256Mi")},
		},
	}
	if _, err := cs.InstancetypeV1beta1().VirtualMachineClusterInstancetypes().Create(ctx, it, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	sockets := v1beta1.Sockets
	pref := &v1beta1.VirtualMachinePreference{
		ObjectMeta: metav1.ObjectMeta{Name: "servers", Namespace: "default"},
		Spec: v1beta1.VirtualMachinePreferenceSpec{
			CPU:     &v1beta1.CPUPreferences{PreferredCPUTopology: &sockets},
			Devices: &v1beta1.DevicePreferences{PreferredDiskBus: kubevirtv1.DiskBusSATA},
		},
	}
	if _, err := cs.InstancetypeV1beta1().VirtualMachinePreferences("default").Create(ctx, pref, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	// A VM with its own memory and an instance type conflicts.
	conflicting := sizedVM(t, "conflict")
	conflicting.Spec.Template.Spec.Domain.Memory = &kubevirtv1.Memory{Guest: resource.NewQuantity(128<<20, resource.BinarySI)}
	_, err := vms.Create(ctx, conflicting, metav1.CreateOptions{})
	requireCauses(t, err, "spec.template.spec.domain.memory")

	missing := sizedVM(t, "missing")
	missing.Spec.Instancetype.Name = "u1.nosuch"
	_, err = vms.Create(ctx, missing, metav1.CreateOptions{})
	requireCauses(t, err, "spec.instancetype")
	if !strings.Contains(err.Error(), "Failure to find instancetype") {
		t.Errorf("missing instance type: %v", err)
	}
	missing = sizedVM(t, "missing-pref")
	missing.Spec.Preference = &kubevirtv1.PreferenceMatcher{Name: "desktops", Kind: "VirtualMachinePreference"}
	_, err = vms.Create(ctx, missing, metav1.CreateOptions{})
	requireCauses(t, err, "spec.preference")

	// Standalone, the server cannot read a volume's claim: inferring is refused on the field.
	inferring := sizedVM(t, "inferring")
	inferring.Spec.Instancetype = &kubevirtv1.InstancetypeMatcher{InferFromVolume: "containerdisk"}
	_, err = vms.Create(ctx, inferring, metav1.CreateOptions{})
	requireCauses(t, err, "spec.instancetype.inferFromVolume")

	// Accepted: the kinds are defaulted as KubeVirt's webhook writes them, and the template of a
	// VM with a preference is kept as written (the preference fills its disk bus later).
	vm := sizedVM(t, "sized")
	vm.Spec.Preference = &kubevirtv1.PreferenceMatcher{Name: "servers", Kind: "VirtualMachinePreference"}
	created, err := vms.Create(ctx, vm, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if k := created.Spec.Instancetype.Kind; k != "virtualmachineclusterinstancetype" {
		t.Errorf("spec.instancetype.kind = %q, want virtualmachineclusterinstancetype", k)
	}
	if d := created.Spec.Template.Spec.Domain.Devices.Disks[0].Disk; d == nil || d.Bus != "" {
		t.Errorf("disk %+v: want the bus left to the preference", d)
	}
	if created.Spec.Template.Spec.Domain.Machine != nil {
		t.Errorf("machine %+v: want it left to the preference", created.Spec.Template.Spec.Domain.Machine)
	}

	// Changing the template into a conflict is refused; a start after the instance type is gone
	// is not the API server's to refuse (the VM has its revision).
	bad := created.DeepCopy()
	bad.Spec.Template.Spec.Domain.CPU = &kubevirtv1.CPU{Cores: 4}
	_, err = vms.Update(ctx, bad, metav1.UpdateOptions{})
	requireCauses(t, err, "spec.template.spec.domain.cpu.cores")
	if err := cs.InstancetypeV1beta1().VirtualMachineClusterInstancetypes().Delete(ctx, "u1.small", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	always := kubevirtv1.RunStrategyAlways
	created.Spec.RunStrategy = &always
	if _, err := vms.Update(ctx, created, metav1.UpdateOptions{}); err != nil {
		t.Errorf("changing the run strategy after the instance type was deleted: %v", err)
	}
}

// TestExpandSpec: what `virtctl expand` calls. The stored VM (expand-spec) and a VM sent in the
// body (expand-vm-spec, not stored) come back with the template completed by the instance type
// and preference and without the matchers; a VM without them comes back as it is; a conflict is a
// 422 naming the field.
func TestExpandSpec(t *testing.T) {
	srv := framework.Start(t, "")
	cs := srv.Clientset(t)
	ctx := context.Background()
	it := &v1beta1.VirtualMachineInstancetype{
		ObjectMeta: metav1.ObjectMeta{Name: "medium", Namespace: "default"},
		Spec: v1beta1.VirtualMachineInstancetypeSpec{
			CPU:    v1beta1.CPUInstancetype{Guest: 4},
			Memory: v1beta1.MemoryInstancetype{Guest: resource.MustParse("1Gi")},
		},
	}
	if _, err := cs.InstancetypeV1beta1().VirtualMachineInstancetypes("default").Create(ctx, it, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	threads := v1beta1.Threads
	pref := &v1beta1.VirtualMachineClusterPreference{
		ObjectMeta: metav1.ObjectMeta{Name: "threads"},
		Spec: v1beta1.VirtualMachinePreferenceSpec{
			CPU:     &v1beta1.CPUPreferences{PreferredCPUTopology: &threads},
			Devices: &v1beta1.DevicePreferences{PreferredDiskBus: kubevirtv1.DiskBusSATA},
		},
	}
	if _, err := cs.InstancetypeV1beta1().VirtualMachineClusterPreferences().Create(ctx, pref, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	vm := sizedVM(t, "expand-me")
	vm.Spec.Instancetype = &kubevirtv1.InstancetypeMatcher{Name: "medium", Kind: "VirtualMachineInstancetype"}
	vm.Spec.Preference = &kubevirtv1.PreferenceMatcher{Name: "threads"}
	check := func(what string, got *kubevirtv1.VirtualMachine) {
		t.Helper()
		if got.Spec.Instancetype != nil || got.Spec.Preference != nil {
			t.Errorf("%s: matchers left: %+v %+v", what, got.Spec.Instancetype, got.Spec.Preference)
		}
		d := got.Spec.Template.Spec.Domain
		if d.CPU == nil || d.CPU.Threads != 4 || d.CPU.Cores != 1 || d.CPU.Sockets != 1 {
			t.Errorf("%s: cpu %+v; want 4 threads", what, d.CPU)
		}
		if d.Memory == nil || d.Memory.Guest == nil || d.Memory.Guest.String() != "1Gi" {
			t.Errorf("%s: memory %+v; want 1Gi", what, d.Memory)
		}
		if disk := d.Devices.Disks[0].Disk; disk == nil || disk.Bus != kubevirtv1.DiskBusSATA {
			t.Errorf("%s: disk %+v; want the preference's sata", what, disk)
		}
	}
	sub := cs.KubevirtV1().RESTClient()
	body, err := json.Marshal(vm)
	if err != nil {
		t.Fatal(err)
	}
	expanded := &kubevirtv1.VirtualMachine{}
	if err := sub.Put().AbsPath("/apis/subresources.kubevirt.io/v1/namespaces/default/expand-vm-spec").
		Body(body).SetHeader("Content-Type", "application/json").Do(ctx).Into(expanded); err != nil {
		t.Fatalf("expand-vm-spec: %v", err)
	}
	check("expand-vm-spec", expanded)
	if _, err := cs.KubevirtV1().VirtualMachines("default").Get(ctx, vm.Name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("expand-vm-spec stored the VM: %v", err)
	}

	if _, err := cs.KubevirtV1().VirtualMachines("default").Create(ctx, vm, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	expanded = &kubevirtv1.VirtualMachine{}
	if err := sub.Get().AbsPath("/apis/subresources.kubevirt.io/v1/namespaces/default/virtualmachines", vm.Name, "expand-spec").
		Do(ctx).Into(expanded); err != nil {
		t.Fatalf("expand-spec: %v", err)
	}
	check("expand-spec", expanded)

	// The same through the nativevirt command, as with virtctl expand.
	var out bytes.Buffer
	if err := runCLI(t, srv, strings.NewReader(""), &out, "expand", "--vm", vm.Name); err != nil {
		t.Fatalf("nativevirt expand --vm: %v", err)
	}
	expanded = &kubevirtv1.VirtualMachine{}
	if err := yaml.UnmarshalStrict(out.Bytes(), expanded); err != nil {
		t.Fatalf("nativevirt expand --vm printed no VirtualMachine: %v\n%s", err, out.String())
	}
	check("nativevirt expand --vm", expanded)
	manifest, err := yaml.Marshal(vm)
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "vm.yaml")
	if err := os.WriteFile(file, manifest, 0o600); err != nil {
		t.Fatal(err)
	}
	out.Reset()
	if err := runCLI(t, srv, strings.NewReader(""), &out, "expand", "--file", file, "-o", "json"); err != nil {
		t.Fatalf("nativevirt expand --file: %v", err)
	}
	expanded = &kubevirtv1.VirtualMachine{}
	if err := json.Unmarshal(out.Bytes(), expanded); err != nil {
		t.Fatalf("nativevirt expand --file -o json printed no VirtualMachine: %v\n%s", err, out.String())
	}
	check("nativevirt expand --file", expanded)

	// A conflict, and a body that is no VirtualMachine.
	bad := vm.DeepCopy()
	bad.Name = "bad"
	bad.Spec.Template.Spec.Domain.CPU = &kubevirtv1.CPU{Sockets: 2}
	body, _ = json.Marshal(bad)
	err = sub.Put().AbsPath("/apis/subresources.kubevirt.io/v1/namespaces/default/expand-vm-spec").
		Body(body).SetHeader("Content-Type", "application/json").Do(ctx).Error()
	requireCauses(t, err, "spec.template.spec.domain.cpu.sockets")
	err = sub.Put().AbsPath("/apis/subresources.kubevirt.io/v1/namespaces/default/expand-vm-spec").
		Body([]byte(`{"spec":{"nosuchfield":1}}`)).SetHeader("Content-Type", "application/json").Do(ctx).Error()
	if !apierrors.IsBadRequest(err) || !strings.Contains(err.Error(), "nosuchfield") {
		t.Errorf("unknown field: %v; want a 400 naming it", err)
	}

	// Discovery lists expand-vm-spec with the verb update.
	resources, err := cs.Discovery().ServerResourcesForGroupVersion("subresources.kubevirt.io/v1")
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, r := range resources.APIResources {
		if r.Name == "expand-vm-spec" && len(r.Verbs) == 1 && r.Verbs[0] == "update" && r.Namespaced {
			found = true
		}
	}
	if !found {
		t.Errorf("discovery of subresources.kubevirt.io/v1 has no expand-vm-spec: %+v", resources.APIResources)
	}
}

// sizedVM is the integration VM without CPU, memory, machine type and disk buses, naming the cluster instance type u1.small.
func sizedVM(t *testing.T, name string) *kubevirtv1.VirtualMachine {
	t.Helper()
	vm := &kubevirtv1.VirtualMachine{}
	if err := yaml.Unmarshal([]byte(framework.VMYAML(name)), vm); err != nil {
		t.Fatal(err)
	}
	d := &vm.Spec.Template.Spec.Domain
	d.CPU, d.Memory, d.Machine = nil, nil, nil
	d.Resources = kubevirtv1.ResourceRequirements{}
	for i := range d.Devices.Disks {
		if d.Devices.Disks[i].Disk != nil {
			d.Devices.Disks[i].Disk.Bus = ""
		}
	}
	vm.Spec.Instancetype = &kubevirtv1.InstancetypeMatcher{Name: "u1.small"}
	return vm
}

// requireCauses checks that err is a 422 whose causes name each field.
func requireCauses(t *testing.T, err error, fields ...string) {
	t.Helper()
	var status apierrors.APIStatus
	if !apierrors.IsInvalid(err) || !errors.As(err, &status) {
		t.Fatalf("got %v; want 422 naming %v", err, fields)
	}
	named := map[string]bool{}
	for _, c := range status.Status().Details.Causes {
		named[c.Field] = true
	}
	for _, f := range fields {
		if !named[f] {
			t.Errorf("the 422 does not name %s: %v", f, err)
		}
	}
}
