package integration

import (
	"bytes"
	"context"
	"net/http"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
	clientset "github.com/nativevirt/nativevirt/pkg/client/clientset/versioned"
	"github.com/nativevirt/nativevirt/test/integration/framework"
)

// addBody is an addvolume body for claim pvc as volume name on bus.
func addBody(name, claim, bus string) string {
	return `{"name":"` + name + `","disk":{"disk":{"bus":"` + bus + `"}},"volumeSource":{"persistentVolumeClaim":{"claimName":"` + claim + `"}}}`
}

// hotVolume returns the volume and disk named name of spec, if any.
func hotVolume(spec *kubevirtv1.VirtualMachineInstanceSpec, name string) (*kubevirtv1.Volume, *kubevirtv1.Disk) {
	var vol *kubevirtv1.Volume
	var disk *kubevirtv1.Disk
	for i := range spec.Volumes {
		if spec.Volumes[i].Name == name {
			vol = &spec.Volumes[i]
		}
	}
	for i := range spec.Domain.Devices.Disks {
		if spec.Domain.Devices.Disks[i].Name == name {
			disk = &spec.Domain.Devices.Disks[i]
		}
	}
	return vol, disk
}

func getVMSpec(t *testing.T, c clientset.Interface, name string) *kubevirtv1.VirtualMachineInstanceSpec {
	t.Helper()
	vm, err := c.KubevirtV1().VirtualMachines(ns).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return &vm.Spec.Template.Spec
}

func getVMISpec(t *testing.T, c clientset.Interface, name string) *kubevirtv1.VirtualMachineInstanceSpec {
	t.Helper()
	vmi, err := c.KubevirtV1().VirtualMachineInstances(ns).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return &vmi.Spec
}

// TestHotplugVolumeSubresources: addvolume and removevolume on VMs (the template changes) and
// on running VMIs (the instance changes), in every group and version, with KubeVirt's checks and
// messages, dry runs, and 202 Accepted.
func TestHotplugVolumeSubresources(t *testing.T) {
	srv := framework.Start(t, "")
	c := srv.Clientset(t)
	client := srv.HTTPClient(t)
	put := func(variant, resource, name, action, body string) response {
		return do(t, client, http.MethodPut, srv.Config.Host+actionPath(variant, resource, name, action), "application/json", []byte(body))
	}

	for _, variant := range pathVariants {
		vm := "hot-vm-" + variant
		makeVM(t, c, vm, vmState{runStrategy: kubevirtv1.RunStrategyHalted})
		t.Run(variant+"/vm", func(t *testing.T) {
			// A dry run changes nothing.
			if r := put(variant, "virtualmachines", vm, "addvolume", `{"dryRun":["All"],`+addBody("data", "data-pvc", "scsi")[1:]); r.code != http.StatusAccepted {
				t.Fatalf("dry-run addvolume: %d %s, want 202", r.code, r.body)
			}
			if v, _ := hotVolume(getVMSpec(t, c, vm), "data"); v != nil {
				t.Fatalf("a dry run added volume %+v", v)
			}
			if r := put(variant, "virtualmachines", vm, "addvolume", addBody("data", "data-pvc", "scsi")); r.code != http.StatusAccepted {
				t.Fatalf("addvolume: %d %s, want 202", r.code, r.body)
			}
			v, d := hotVolume(getVMSpec(t, c, vm), "data")
			if v == nil || v.PersistentVolumeClaim == nil || v.PersistentVolumeClaim.ClaimName != "data-pvc" || !v.PersistentVolumeClaim.Hotpluggable {
				t.Fatalf("VM template volume data = %+v, want the hotpluggable claim data-pvc", v)
			}
			if d == nil || d.Disk == nil || d.Disk.Bus != kubevirtv1.DiskBusSCSI {
				t.Fatalf("VM template disk data = %+v, want a scsi disk", d)
			}
			// A disk without a device or bus is a virtio disk.
			if r := put(variant, "virtualmachines", vm, "addvolume", `{"name":"logs","disk":{},"volumeSource":{"persistentVolumeClaim":{"claimName":"logs-pvc"}}}`); r.code != http.StatusAccepted {
				t.Fatalf("addvolume with an empty disk: %d %s, want 202", r.code, r.body)
			}
			if _, d := hotVolume(getVMSpec(t, c, vm), "logs"); d == nil || d.Disk == nil || d.Disk.Bus != kubevirtv1.DiskBusVirtio {
				t.Errorf("disk logs = %+v, want a virtio disk", d)
			}
			// A DataVolume source: hotpluggable as a claim is; its name is required.
			if r := put(variant, "virtualmachines", vm, "addvolume", `{"name":"dv","disk":{},"volumeSource":{"dataVolume":{"name":"dv-src"}}}`); r.code != http.StatusAccepted {
				t.Fatalf("addvolume of a DataVolume: %d %s, want 202", r.code, r.body)
			}
			if v, _ := hotVolume(getVMSpec(t, c, vm), "dv"); v == nil || v.DataVolume == nil || v.DataVolume.Name != "dv-src" || !v.DataVolume.Hotpluggable {
				t.Fatalf("VM template volume dv = %+v, want the hotpluggable DataVolume dv-src", v)
			}
			if r := put(variant, "virtualmachines", vm, "addvolume", `{"name":"dv2","disk":{},"volumeSource":{"dataVolume":{}}}`); r.code != http.StatusUnprocessableEntity ||
				!strings.Contains(r.body, "volumeSource.dataVolume.name") {
				t.Errorf("addvolume of a DataVolume without name: %d %s, want 422 naming volumeSource.dataVolume.name", r.code, r.body)
			}
			if r := put(variant, "virtualmachines", vm, "addvolume", `{"name":"dv3","disk":{"disk":{"bus":"sata"}},"volumeSource":{"dataVolume":{"name":"dv-3"}}}`); r.code != http.StatusUnprocessableEntity ||
				!strings.Contains(r.body, "requires bus to be 'scsi' or 'virtio'") {
				t.Errorf("addvolume of a DataVolume on sata: %d %s, want 422", r.code, r.body)
			}
			if r := put(variant, "virtualmachines", vm, "removevolume", `{"name":"dv"}`); r.code != http.StatusAccepted {
				t.Fatalf("removevolume dv: %d %s", r.code, r.body)
			}

			cases := []struct {
				action, body string
				wantCode     int
				wantMsg      string
			}{
				{"addvolume", "", 400, "Request with no body"},
				{"addvolume", `{"disk":{},"volumeSource":{"persistentVolumeClaim":{"claimName":"x"}}}`, 400, "AddVolumeOptions requires name to be set"},
				{"addvolume", `{"name":"x","volumeSource":{"persistentVolumeClaim":{"claimName":"x"}}}`, 400, "AddVolumeOptions requires disk to not be nil"},
				{"addvolume", `{"name":"x","disk":{}}`, 400, "AddVolumeOptions requires VolumeSource to not be nil"},
				{"addvolume", `{"name":"x","disk":{},"volumeSource":{}}`, 422, "volumeSource"},
				{"addvolume", `{"name":"x","disk":{},"volumeSource":{"persistentVolumeClaim":{}}}`, 422, "volumeSource.persistentVolumeClaim.claimName"},
				{"addvolume", addBody("x", "x-pvc", "sata"), 422, "Hotplug configuration for disk [x] requires bus to be 'scsi' or 'virtio'. [sata] is not permitted."},
				{"addvolume", `{"name":"x","disk":{"cdrom":{}},"volumeSource":{"persistentVolumeClaim":{"claimName":"x"}}}`, 422, "requires diskDevice of type 'disk'"},
				{"addvolume", addBody("data", "other-pvc", "scsi"), 409, "Unable to add volume [data] because volume with that name already exists"},
				{"addvolume", addBody("other", "data-pvc", "scsi"), 409, "Unable to add volume source [data-pvc] because it already exists"},
				{"addvolume", addBody("x", "x-pvc", "scsi") + "junk", 400, ""},
				{"addvolume", `{"dryRun":["Some"],"name":"x","disk":{},"volumeSource":{"persistentVolumeClaim":{"claimName":"x"}}}`, 400, "dryRun"},
				{"removevolume", "", 400, "Request with no body"},
				{"removevolume", `{}`, 400, "RemoveVolumeOptions requires name to be set"},
				{"removevolume", `{"name":"nope"}`, 409, "Unable to remove volume [nope] because it does not exist"},
				{"removevolume", `{"name":"containerdisk"}`, 409, "Unable to remove volume [containerdisk] because it is not hotpluggable"},
			}
			for _, tc := range cases {
				r := put(variant, "virtualmachines", vm, tc.action, tc.body)
				if r.code != tc.wantCode || !strings.Contains(r.body, tc.wantMsg) {
					t.Errorf("%s %s: %d %s, want %d with %q", tc.action, tc.body, r.code, r.body, tc.wantCode, tc.wantMsg)
				}
			}
			if r := put(variant, "virtualmachines", "missing", "addvolume", addBody("x", "x", "scsi")); r.code != http.StatusNotFound {
				t.Errorf("addvolume on a missing VM: %d %s, want 404", r.code, r.body)
			}

			// Removal by volume name and by claim name; a dry run first.
			if r := put(variant, "virtualmachines", vm, "removevolume", `{"name":"data","dryRun":["All"]}`); r.code != http.StatusAccepted {
				t.Fatalf("dry-run removevolume: %d %s", r.code, r.body)
			}
			if v, _ := hotVolume(getVMSpec(t, c, vm), "data"); v == nil {
				t.Fatal("a dry run removed volume data")
			}
			if r := put(variant, "virtualmachines", vm, "removevolume", `{"name":"data"}`); r.code != http.StatusAccepted {
				t.Fatalf("removevolume: %d %s", r.code, r.body)
			}
			if r := put(variant, "virtualmachines", vm, "removevolume", `{"name":"logs-pvc"}`); r.code != http.StatusAccepted {
				t.Fatalf("removevolume by claim name: %d %s", r.code, r.body)
			}
			spec := getVMSpec(t, c, vm)
			for _, n := range []string{"data", "logs"} {
				if v, d := hotVolume(spec, n); v != nil || d != nil {
					t.Errorf("after removevolume %s: volume %+v disk %+v remain", n, v, d)
				}
			}
		})

		t.Run(variant+"/vmi", func(t *testing.T) {
			running := "hot-running-" + variant
			makeVMI(t, c, running, kubevirtv1.Running, false)
			scheduled := "hot-scheduled-" + variant
			makeVMI(t, c, scheduled, kubevirtv1.Scheduled, false)

			if r := put(variant, "virtualmachineinstances", scheduled, "addvolume", addBody("data", "data-pvc", "virtio")); r.code != http.StatusConflict || !strings.Contains(r.body, "VMI is not running") {
				t.Errorf("addvolume on a scheduled VMI: %d %s, want 409 VMI is not running", r.code, r.body)
			}
			if r := put(variant, "virtualmachineinstances", running, "addvolume", `{"dryRun":["All"],`+addBody("data", "data-pvc", "virtio")[1:]); r.code != http.StatusAccepted {
				t.Fatalf("dry-run addvolume: %d %s", r.code, r.body)
			}
			if v, _ := hotVolume(getVMISpec(t, c, running), "data"); v != nil {
				t.Fatalf("a dry run added volume %+v", v)
			}
			if r := put(variant, "virtualmachineinstances", running, "addvolume", addBody("data", "data-pvc", "virtio")); r.code != http.StatusAccepted {
				t.Fatalf("addvolume: %d %s", r.code, r.body)
			}
			v, d := hotVolume(getVMISpec(t, c, running), "data")
			if v == nil || !v.PersistentVolumeClaim.Hotpluggable || d == nil || d.Disk.Bus != kubevirtv1.DiskBusVirtio {
				t.Fatalf("VMI volume %+v disk %+v, want the hotpluggable claim on a virtio disk", v, d)
			}
			if r := put(variant, "virtualmachineinstances", running, "addvolume", addBody("data", "data-pvc", "virtio")); r.code != http.StatusConflict {
				t.Errorf("second addvolume: %d %s, want 409", r.code, r.body)
			}
			if r := put(variant, "virtualmachineinstances", running, "removevolume", `{"name":"scratch"}`); r.code != http.StatusConflict || !strings.Contains(r.body, "not hotpluggable") {
				t.Errorf("removevolume scratch: %d %s, want 409 not hotpluggable", r.code, r.body)
			}
			if r := put(variant, "virtualmachineinstances", running, "removevolume", `{"name":"data"}`); r.code != http.StatusAccepted {
				t.Fatalf("removevolume: %d %s", r.code, r.body)
			}
			if r := put(variant, "virtualmachineinstances", running, "addvolume", `{"name":"dv","disk":{},"volumeSource":{"dataVolume":{"name":"dv-src"}}}`); r.code != http.StatusAccepted {
				t.Fatalf("addvolume of a DataVolume: %d %s, want 202", r.code, r.body)
			}
			if v, d := hotVolume(getVMISpec(t, c, running), "dv"); v == nil || v.DataVolume == nil || !v.DataVolume.Hotpluggable || d == nil {
				t.Fatalf("VMI volume dv %+v disk %+v, want the hotpluggable DataVolume with its disk", v, d)
			}
			if r := put(variant, "virtualmachineinstances", running, "removevolume", `{"name":"dv-src"}`); r.code != http.StatusAccepted {
				t.Fatalf("removevolume dv by DataVolume name: %d %s", r.code, r.body)
			}
			if v, d := hotVolume(getVMISpec(t, c, running), "data"); v != nil || d != nil {
				t.Errorf("after removevolume: volume %+v disk %+v remain", v, d)
			}
		})
	}
}

// TestHotplugVMIUpdateValidation: a VMI's spec may gain and lose hotpluggable volumes (with
// their disks) through a plain update, and nothing else.
func TestHotplugVMIUpdateValidation(t *testing.T) {
	srv := framework.Start(t, "")
	c := srv.Clientset(t)
	ctx := context.Background()
	vmi := makeVMI(t, c, "hot-update", kubevirtv1.Running, false)

	update := func(mutate func(*kubevirtv1.VirtualMachineInstanceSpec)) error {
		cur, err := c.KubevirtV1().VirtualMachineInstances(ns).Get(ctx, vmi.Name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		mutate(&cur.Spec)
		_, err = c.KubevirtV1().VirtualMachineInstances(ns).Update(ctx, cur, metav1.UpdateOptions{})
		return err
	}
	hot := func(spec *kubevirtv1.VirtualMachineInstanceSpec, bus kubevirtv1.DiskBus, hotpluggable bool) {
		v := kubevirtv1.Volume{Name: "hot"}
		v.PersistentVolumeClaim = &kubevirtv1.PersistentVolumeClaimVolumeSource{Hotpluggable: hotpluggable}
		v.PersistentVolumeClaim.ClaimName = "hot-pvc"
		spec.Volumes = append(spec.Volumes, v)
		spec.Domain.Devices.Disks = append(spec.Domain.Devices.Disks, kubevirtv1.Disk{Name: "hot",
			DiskDevice: kubevirtv1.DiskDevice{Disk: &kubevirtv1.DiskTarget{Bus: bus}}})
	}
	cases := []struct {
		name    string
		mutate  func(*kubevirtv1.VirtualMachineInstanceSpec)
		wantErr string
	}{
		{"a claim that is not hotpluggable", func(s *kubevirtv1.VirtualMachineInstanceSpec) { hot(s, kubevirtv1.DiskBusSCSI, false) }, "spec is immutable"},
		{"a sata hotplug disk", func(s *kubevirtv1.VirtualMachineInstanceSpec) { hot(s, kubevirtv1.DiskBusSATA, true) }, "requires bus to be 'scsi' or 'virtio'"},
		{"a hotplug volume without a disk", func(s *kubevirtv1.VirtualMachineInstanceSpec) {
			hot(s, kubevirtv1.DiskBusSCSI, true)
			s.Domain.Devices.Disks = s.Domain.Devices.Disks[:len(s.Domain.Devices.Disks)-1]
		}, "disk hot does not exist"},
		{"a hotplug volume and another change", func(s *kubevirtv1.VirtualMachineInstanceSpec) {
			hot(s, kubevirtv1.DiskBusSCSI, true)
			s.Hostname = "changed"
		}, "spec is immutable"},
		{"a hotplug volume", func(s *kubevirtv1.VirtualMachineInstanceSpec) { hot(s, kubevirtv1.DiskBusSCSI, true) }, ""},
		{"a changed hotplug disk", func(s *kubevirtv1.VirtualMachineInstanceSpec) {
			_, d := hotVolume(s, "hot")
			d.Disk.Bus = kubevirtv1.DiskBusVirtio
		}, "hotplug disk hot, changed"},
		{"a changed hotplug volume", func(s *kubevirtv1.VirtualMachineInstanceSpec) {
			v, _ := hotVolume(s, "hot")
			v.PersistentVolumeClaim.ClaimName = "other"
		}, "hotplug volume hot, changed"},
		{"removing a permanent volume", func(s *kubevirtv1.VirtualMachineInstanceSpec) {
			s.Volumes = s.Volumes[1:]
			s.Domain.Devices.Disks = s.Domain.Devices.Disks[1:]
		}, "spec is immutable"},
	}
	for _, tc := range cases {
		err := update(tc.mutate)
		switch {
		case tc.wantErr == "" && err != nil:
			t.Errorf("%s: %v, want accepted", tc.name, err)
		case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
			t.Errorf("%s: %v, want an error with %q", tc.name, err, tc.wantErr)
		}
	}
}

// TestHotplugCLI: `nativevirt addvolume|removevolume` reach the VMI (default) or the VM
// (--persist) with virtctl's defaults (the claim's name, a scsi disk) and flags.
func TestHotplugCLI(t *testing.T) {
	srv := framework.Start(t, "")
	c := srv.Clientset(t)
	makeVM(t, c, "cli-hot", vmState{runStrategy: kubevirtv1.RunStrategyHalted})
	makeVMI(t, c, "cli-hot", kubevirtv1.Running, false)

	var out bytes.Buffer
	if err := runCLI(t, srv, strings.NewReader(""), &out, "addvolume", "cli-hot", "--volume-name=scratch-pvc", "--serial=SER1"); err != nil {
		t.Fatalf("addvolume: %v", err)
	}
	if !strings.Contains(out.String(), "Successfully submitted add volume request to VMI cli-hot for volume scratch-pvc") {
		t.Errorf("addvolume printed %q", out.String())
	}
	_, d := hotVolume(getVMISpec(t, c, "cli-hot"), "scratch-pvc")
	if d == nil || d.Disk == nil || d.Disk.Bus != kubevirtv1.DiskBusSCSI || d.Serial != "SER1" {
		t.Errorf("VMI disk scratch-pvc = %+v, want a scsi disk with serial SER1", d)
	}
	if v, _ := hotVolume(getVMSpec(t, c, "cli-hot"), "scratch-pvc"); v != nil {
		t.Errorf("without --persist the VM got volume %+v", v)
	}
	if err := runCLI(t, srv, strings.NewReader(""), &out, "addvolume", "cli-hot", "--volume-name=data", "--persist", "--bus=virtio"); err != nil {
		t.Fatalf("addvolume --persist: %v", err)
	}
	if _, d := hotVolume(getVMSpec(t, c, "cli-hot"), "data"); d == nil || d.Disk.Bus != kubevirtv1.DiskBusVirtio {
		t.Errorf("VM template disk data = %+v, want a virtio disk", d)
	}
	if err := runCLI(t, srv, strings.NewReader(""), &out, "addvolume", "cli-hot", "--volume-name=x", "--bus=sata"); err == nil ||
		!strings.Contains(err.Error(), "requires bus to be 'scsi' or 'virtio'") {
		t.Errorf("addvolume --bus=sata: %v, want the server's refusal", err)
	}
	if err := runCLI(t, srv, strings.NewReader(""), &out, "removevolume", "cli-hot", "--volume-name=data", "--persist"); err != nil {
		t.Fatalf("removevolume --persist: %v", err)
	}
	if v, _ := hotVolume(getVMSpec(t, c, "cli-hot"), "data"); v != nil {
		t.Errorf("after removevolume --persist the VM keeps %+v", v)
	}
	if err := runCLI(t, srv, strings.NewReader(""), &out, "removevolume", "cli-hot", "--volume-name=scratch-pvc"); err != nil {
		t.Fatalf("removevolume: %v", err)
	}
	if v, _ := hotVolume(getVMISpec(t, c, "cli-hot"), "scratch-pvc"); v != nil {
		t.Errorf("after removevolume the VMI keeps %+v", v)
	}
	if err := runCLI(t, srv, strings.NewReader(""), &out, "removevolume", "cli-hot", "--volume-name=containerdisk"); err == nil ||
		!strings.Contains(err.Error(), "not hotpluggable") {
		t.Errorf("removevolume containerdisk: %v, want the server's refusal", err)
	}
}
