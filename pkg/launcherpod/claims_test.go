package launcherpod

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
	"github.com/nativevirt/nativevirt/pkg/node/convert"
)

// claims is a ClaimLookup over fixed claims of namespace "default".
func claims(pvcs ...*corev1.PersistentVolumeClaim) ClaimLookup {
	return func(ns, name string) (*corev1.PersistentVolumeClaim, error) {
		for _, p := range pvcs {
			if p.Namespace == ns && p.Name == name {
				return p, nil
			}
		}
		return nil, apierrors.NewNotFound(schema.GroupResource{Resource: "persistentvolumeclaims"}, name)
	}
}

func pvc(name string, mode corev1.PersistentVolumeMode) *corev1.PersistentVolumeClaim {
	return &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
		Spec: corev1.PersistentVolumeClaimSpec{VolumeMode: ptr.To(mode), Resources: corev1.VolumeResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}}},
	}
}

func claimVMI(volumes ...kubevirtv1.Volume) *kubevirtv1.VirtualMachineInstance {
	vmi := testVMI()
	vmi.Spec.Volumes = append(vmi.Spec.Volumes, volumes...)
	return vmi
}

func pvcVolume(name, claim string, readOnly bool) kubevirtv1.Volume {
	return kubevirtv1.Volume{Name: name, VolumeSource: kubevirtv1.VolumeSource{PersistentVolumeClaim: &kubevirtv1.PersistentVolumeClaimVolumeSource{
		PersistentVolumeClaimVolumeSource: corev1.PersistentVolumeClaimVolumeSource{ClaimName: claim, ReadOnly: readOnly}}}}
}

func TestRenderClaims(t *testing.T) {
	ephemeral := kubevirtv1.Volume{Name: "base", VolumeSource: kubevirtv1.VolumeSource{Ephemeral: &kubevirtv1.EphemeralVolumeSource{
		PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "golden"}}}}
	vmi := claimVMI(pvcVolume("data", "data-claim", false), pvcVolume("raw", "block-claim", false),
		pvcVolume("iso", "iso-claim", true), ephemeral)
	bound := pvc("data-claim", corev1.PersistentVolumeFilesystem)
	bound.Status.Capacity = corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("2Gi")}
	pod, err := Render(vmi, Config{Claims: claims(bound,
		pvc("block-claim", corev1.PersistentVolumeBlock), pvc("iso-claim", corev1.PersistentVolumeFilesystem),
		pvc("golden", corev1.PersistentVolumeFilesystem))})
	if err != nil {
		t.Fatal(err)
	}
	gotVolumes := map[string]corev1.PersistentVolumeClaimVolumeSource{}
	for _, v := range pod.Spec.Volumes {
		if v.PersistentVolumeClaim != nil {
			gotVolumes[v.Name] = *v.PersistentVolumeClaim
		}
	}
	wantVolumes := map[string]corev1.PersistentVolumeClaimVolumeSource{
		"data": {ClaimName: "data-claim"}, "raw": {ClaimName: "block-claim"},
		"iso": {ClaimName: "iso-claim", ReadOnly: true}, "base": {ClaimName: "golden", ReadOnly: true},
	}
	if d := cmp.Diff(wantVolumes, gotVolumes); d != "" {
		t.Errorf("claim volumes (-want +got):\n%s", d)
	}
	compute := pod.Spec.Containers[0]
	wantMounts := []corev1.VolumeMount{
		{Name: PrivateVolume, MountPath: PrivateDir},
		{Name: DisksVolume, MountPath: DisksDir},
		{Name: BinVolume, MountPath: BinDir}, // the test instance boots from a containerDisk
		{Name: "data", MountPath: "/var/run/nativevirt-pvcs/data"},
		{Name: "iso", MountPath: "/var/run/nativevirt-pvcs/iso", ReadOnly: true},
		{Name: "base", MountPath: "/var/run/nativevirt-pvcs/base", ReadOnly: true},
	}
	if d := cmp.Diff(wantMounts, compute.VolumeMounts); d != "" {
		t.Errorf("mounts (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]corev1.VolumeDevice{{Name: "raw", DevicePath: "/dev/raw"}}, compute.VolumeDevices); d != "" {
		t.Errorf("devices (-want +got):\n%s", d)
	}
	if d := cmp.Diff(map[string]bool{"raw": true}, BlockVolumes(pod)); d != "" {
		t.Errorf("BlockVolumes (-want +got):\n%s", d)
	}
	// Only the writable filesystem claim gets an image created, sized to the bound capacity.
	args := strings.Join(compute.Command, " ")
	if want := "--claim-disk data=2147483648"; !strings.Contains(args, want) || strings.Count(args, "--claim-disk") != 1 {
		t.Errorf("launcher command %q, want exactly one %q", args, want)
	}
}

// The converter looks for filesystem claims where the pod mounts them.
func TestClaimsDirMatchesConverter(t *testing.T) {
	if ClaimsDir != convert.DefaultPVCDir {
		t.Errorf("pod mounts claims at %s, the converter looks in %s", ClaimsDir, convert.DefaultPVCDir)
	}
}

func TestRenderClaimErrors(t *testing.T) {
	tests := []struct {
		name    string
		vmi     *kubevirtv1.VirtualMachineInstance
		lookup  ClaimLookup
		pending bool
		want    string
	}{
		{"missing claim", claimVMI(pvcVolume("data", "nope", false)), claims(), true, "claim nope"},
		{"no lookup", claimVMI(pvcVolume("data", "c", false)), nil, false, "not available"},
		{"reserved volume name", claimVMI(pvcVolume("private", "c", false)), claims(pvc("c", corev1.PersistentVolumeFilesystem)), false, "reserved"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Render(tt.vmi, Config{Claims: tt.lookup})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want one containing %q", err, tt.want)
			}
			if got := errors.Is(err, ErrClaimPending); got != tt.pending {
				t.Errorf("pending = %v, want %v (%v)", got, tt.pending, err)
			}
		})
	}
}

// ReadWriteMany claims are announced to the node agent: they stay in place during a migration.
func TestRenderSharedClaims(t *testing.T) {
	rwx := pvc("shared-claim", corev1.PersistentVolumeFilesystem)
	rwx.Spec.AccessModes = []corev1.PersistentVolumeAccessMode{corev1.ReadWriteMany}
	rwo := pvc("local-claim", corev1.PersistentVolumeFilesystem)
	rwo.Spec.AccessModes = []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce}
	ephemeral := kubevirtv1.Volume{Name: "base", VolumeSource: kubevirtv1.VolumeSource{Ephemeral: &kubevirtv1.EphemeralVolumeSource{
		PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "shared-claim"}}}}
	vmi := claimVMI(pvcVolume("shared", "shared-claim", false), pvcVolume("local", "local-claim", false), ephemeral)
	pod, err := Render(vmi, Config{Claims: claims(rwx, rwo)})
	if err != nil {
		t.Fatal(err)
	}
	if got := pod.Annotations[SharedVolumesAnnotation]; got != "shared" {
		t.Errorf("%s = %q, want %q", SharedVolumesAnnotation, got, "shared")
	}
	if d := cmp.Diff(map[string]bool{"shared": true}, SharedVolumes(pod)); d != "" {
		t.Errorf("SharedVolumes (-want +got):\n%s", d)
	}
	plain, err := Render(claimVMI(pvcVolume("local", "local-claim", false)), Config{Claims: claims(rwo)})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := plain.Annotations[SharedVolumesAnnotation]; ok || len(SharedVolumes(plain)) != 0 {
		t.Errorf("a pod without shared claims has %q", plain.Annotations[SharedVolumesAnnotation])
	}
}

// A dataVolume volume uses the DataVolume's claim like a persistentVolumeClaim volume; the
// launcher waits for the importer's disk.img instead of creating one, and a ReadWriteMany claim
// is shared (live migration keeps it in place).
func TestRenderDataVolumeClaims(t *testing.T) {
	dv := func(name string) kubevirtv1.Volume {
		return kubevirtv1.Volume{Name: name, VolumeSource: kubevirtv1.VolumeSource{DataVolume: &kubevirtv1.DataVolumeSource{Name: name + "-dv"}}}
	}
	shared := pvc("root-dv", corev1.PersistentVolumeFilesystem)
	shared.Spec.AccessModes = []corev1.PersistentVolumeAccessMode{corev1.ReadWriteMany}
	shared.Status.Capacity = corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("2Gi")}
	pod, err := Render(claimVMI(dv("root"), dv("raw")), Config{Claims: claims(shared, pvc("raw-dv", corev1.PersistentVolumeBlock))})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, v := range pod.Spec.Volumes {
		if v.PersistentVolumeClaim != nil {
			got[v.Name] = v.PersistentVolumeClaim.ClaimName
		}
	}
	if d := cmp.Diff(map[string]string{"root": "root-dv", "raw": "raw-dv"}, got); d != "" {
		t.Errorf("claim volumes (-want +got):\n%s", d)
	}
	compute := pod.Spec.Containers[0]
	args := strings.Join(compute.Command, " ")
	if want := "--await-file /var/run/nativevirt-pvcs/root/disk.img"; !strings.Contains(args, want) {
		t.Errorf("launcher command %q lacks %q", args, want)
	}
	if strings.Contains(args, "--claim-disk") {
		t.Errorf("launcher command %q creates the disk image of a DataVolume", args)
	}
	if d := cmp.Diff([]corev1.VolumeDevice{{Name: "raw", DevicePath: "/dev/raw"}}, compute.VolumeDevices); d != "" {
		t.Errorf("devices (-want +got):\n%s", d)
	}
	if got := pod.Annotations[SharedVolumesAnnotation]; got != "root" {
		t.Errorf("shared volumes %q, want root", got)
	}
	// Without the claim (the DataVolume has not made it yet) the pod waits.
	if _, err := Render(claimVMI(dv("root")), Config{Claims: claims()}); !errors.Is(err, ErrClaimPending) {
		t.Errorf("Render without the claim: %v, want ErrClaimPending", err)
	}
}
