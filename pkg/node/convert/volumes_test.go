package convert

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
)

func TestVolumeSource(t *testing.T) {
	claim := corev1.PersistentVolumeClaimVolumeSource{ClaimName: "c"}
	ctx := Context{
		DisksDir:      "/disks",
		PVCDir:        "/pvcs",
		DiskFormats:   map[string]DiskFormat{"cd": FormatQCOW2, "pvc": FormatQCOW2},
		BlockVolumes:  map[string]bool{"blk": true, "eph-blk": true},
		SharedVolumes: map[string]bool{"rwx": true},
	}
	tests := []struct {
		name    string
		vol     kubevirtv1.Volume
		want    diskSource
		wantErr string
	}{{
		name: "container disk: copied image with an overlay",
		vol:  kubevirtv1.Volume{Name: "cd", VolumeSource: kubevirtv1.VolumeSource{ContainerDisk: &kubevirtv1.ContainerDiskSource{Image: "i"}}},
		want: diskSource{path: "/disks/cd/disk.img", format: FormatQCOW2, overlay: "/disks/cd/overlay.qcow2"},
	}, {
		name:    "container disk of unknown format",
		vol:     kubevirtv1.Volume{Name: "other", VolumeSource: kubevirtv1.VolumeSource{ContainerDisk: &kubevirtv1.ContainerDiskSource{Image: "i"}}},
		wantErr: "Context.DiskFormats",
	}, {
		name: "empty disk",
		vol:  kubevirtv1.Volume{Name: "e", VolumeSource: kubevirtv1.VolumeSource{EmptyDisk: &kubevirtv1.EmptyDiskSource{Capacity: qty("1Gi")}}},
		want: diskSource{path: "/disks/e/disk.img", format: FormatRaw},
	}, {
		name: "cloud-init NoCloud",
		vol:  kubevirtv1.Volume{Name: "ci", VolumeSource: kubevirtv1.VolumeSource{CloudInitNoCloud: &kubevirtv1.CloudInitNoCloudSource{UserData: "x"}}},
		want: diskSource{path: "/disks/ci/cloudinit.iso", format: FormatRaw},
	}, {
		name: "cloud-init ConfigDrive",
		vol:  kubevirtv1.Volume{Name: "cd2", VolumeSource: kubevirtv1.VolumeSource{CloudInitConfigDrive: &kubevirtv1.CloudInitConfigDriveSource{UserData: "x"}}},
		want: diskSource{path: "/disks/cd2/cloudinit.iso", format: FormatRaw},
	}, {
		name: "config map: the launcher's read-only ISO",
		vol:  kubevirtv1.Volume{Name: "cm", VolumeSource: kubevirtv1.VolumeSource{ConfigMap: &kubevirtv1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "app"}}}},
		want: diskSource{path: "/disks/cm/config.iso", format: FormatRaw, readOnly: true},
	}, {
		name: "sysprep",
		vol: kubevirtv1.Volume{Name: "sp", VolumeSource: kubevirtv1.VolumeSource{Sysprep: &kubevirtv1.SysprepSource{
			ConfigMap: &corev1.LocalObjectReference{Name: "unattend"}}}},
		want: diskSource{path: "/disks/sp/config.iso", format: FormatRaw, readOnly: true},
	}, {
		name: "service account",
		vol:  kubevirtv1.Volume{Name: "sa", VolumeSource: kubevirtv1.VolumeSource{ServiceAccount: &kubevirtv1.ServiceAccountVolumeSource{ServiceAccountName: "default"}}},
		want: diskSource{path: "/disks/sa/config.iso", format: FormatRaw, readOnly: true},
	}, {
		name: "host disk",
		vol:  kubevirtv1.Volume{Name: "h", VolumeSource: kubevirtv1.VolumeSource{HostDisk: &kubevirtv1.HostDisk{Path: "/data//img.raw", Type: kubevirtv1.HostDiskExists}}},
		want: diskSource{path: "/data/img.raw", format: FormatRaw},
	}, {
		name:    "relative host disk",
		vol:     kubevirtv1.Volume{Name: "h", VolumeSource: kubevirtv1.VolumeSource{HostDisk: &kubevirtv1.HostDisk{Path: "img.raw"}}},
		wantErr: "spec.volumes[3].hostDisk.path",
	}, {
		name: "filesystem claim with a known format",
		vol:  kubevirtv1.Volume{Name: "pvc", VolumeSource: kubevirtv1.VolumeSource{PersistentVolumeClaim: &kubevirtv1.PersistentVolumeClaimVolumeSource{PersistentVolumeClaimVolumeSource: claim}}},
		want: diskSource{path: "/pvcs/pvc/disk.img", format: FormatQCOW2},
	}, {
		name: "shared (ReadWriteMany) filesystem claim",
		vol:  kubevirtv1.Volume{Name: "rwx", VolumeSource: kubevirtv1.VolumeSource{PersistentVolumeClaim: &kubevirtv1.PersistentVolumeClaimVolumeSource{PersistentVolumeClaimVolumeSource: claim}}},
		want: diskSource{path: "/pvcs/rwx/disk.img", format: FormatRaw, shared: true},
	}, {
		name: "read-only block claim",
		vol: kubevirtv1.Volume{Name: "blk", VolumeSource: kubevirtv1.VolumeSource{PersistentVolumeClaim: &kubevirtv1.PersistentVolumeClaimVolumeSource{
			PersistentVolumeClaimVolumeSource: corev1.PersistentVolumeClaimVolumeSource{ClaimName: "c", ReadOnly: true}}}},
		want: diskSource{block: true, path: "/dev/blk", format: FormatRaw, readOnly: true},
	}, {
		name: "hotpluggable claim present from the start: a claim of the launcher pod",
		vol:  kubevirtv1.Volume{Name: "hp", VolumeSource: kubevirtv1.VolumeSource{PersistentVolumeClaim: &kubevirtv1.PersistentVolumeClaimVolumeSource{PersistentVolumeClaimVolumeSource: claim, Hotpluggable: true}}},
		want: diskSource{path: "/pvcs/hp/disk.img", format: FormatRaw},
	}, {
		name: "ephemeral: read-only claim under an overlay",
		vol:  kubevirtv1.Volume{Name: "eph-blk", VolumeSource: kubevirtv1.VolumeSource{Ephemeral: &kubevirtv1.EphemeralVolumeSource{PersistentVolumeClaim: &claim}}},
		want: diskSource{block: true, path: "/dev/eph-blk", format: FormatRaw, readOnly: true, transient: true},
	}, {
		name:    "ephemeral without a claim",
		vol:     kubevirtv1.Volume{Name: "eph", VolumeSource: kubevirtv1.VolumeSource{Ephemeral: &kubevirtv1.EphemeralVolumeSource{}}},
		wantErr: "spec.volumes[3].ephemeral.persistentVolumeClaim",
	}, {
		name: "data volume: its claim, like a persistentVolumeClaim",
		vol:  kubevirtv1.Volume{Name: "dv", VolumeSource: kubevirtv1.VolumeSource{DataVolume: &kubevirtv1.DataVolumeSource{Name: "dv"}}},
		want: diskSource{path: ClaimPath(ctx.PVCDir, "dv"), format: FormatRaw},
	}, {
		name: "hotpluggable data volume present from the start: a claim of the launcher pod",
		vol:  kubevirtv1.Volume{Name: "dv", VolumeSource: kubevirtv1.VolumeSource{DataVolume: &kubevirtv1.DataVolumeSource{Name: "dv", Hotpluggable: true}}},
		want: diskSource{path: ClaimPath(ctx.PVCDir, "dv"), format: FormatRaw},
	}, {
		name:    "no source",
		vol:     kubevirtv1.Volume{Name: "none"},
		wantErr: "volume none",
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := volumeSource(&tc.vol, ctx, field.NewPath("spec", "volumes").Index(3))
			var errs field.ErrorList
			if err != nil {
				errs = append(errs, err)
			}
			checkErrs(t, errs, tc.wantErr)
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(diskSource{})); tc.wantErr == "" && diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestDetectFormat(t *testing.T) {
	tests := []struct {
		header []byte
		want   DiskFormat
	}{
		{[]byte{'Q', 'F', 'I', 0xfb, 0, 0, 0, 3}, FormatQCOW2},
		{[]byte{0xeb, 0x63, 0x90}, FormatRaw},
		{[]byte("QFI"), FormatRaw},
		{nil, FormatRaw},
	}
	for _, tc := range tests {
		if got := DetectFormat(tc.header); got != tc.want {
			t.Errorf("DetectFormat(%q) = %s, want %s", tc.header, got, tc.want)
		}
	}
}

func TestNeedsOverlay(t *testing.T) {
	vmi := &kubevirtv1.VirtualMachineInstance{Spec: kubevirtv1.VirtualMachineInstanceSpec{Domain: kubevirtv1.DomainSpec{Devices: kubevirtv1.Devices{Disks: []kubevirtv1.Disk{
		{Name: "root"},
		{Name: "data", DiskDevice: kubevirtv1.DiskDevice{Disk: &kubevirtv1.DiskTarget{Bus: "sata"}}},
		{Name: "ro", DiskDevice: kubevirtv1.DiskDevice{Disk: &kubevirtv1.DiskTarget{ReadOnly: true}}},
		{Name: "installer", DiskDevice: kubevirtv1.DiskDevice{CDRom: &kubevirtv1.CDRomTarget{}}},
	}}}}}
	for vol, want := range map[string]bool{"root": true, "data": true, "ro": false, "installer": false, "unused": false} {
		if got := NeedsOverlay(vmi, vol); got != want {
			t.Errorf("NeedsOverlay(%s) = %v, want %v", vol, got, want)
		}
	}
}
