package instancetype

import (
	instancetypev1beta1 "github.com/nativevirt/nativevirt/pkg/apis/instancetype/v1beta1"
	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
)

// ApplyVolumePreferences gives the preferred storage class to the DataVolume templates of a
// VirtualMachine whose claim (pvc or storage) names none. KubeVirt does this when it defaults
// the VirtualMachine itself (pkg/defaults/defaults.go, setPreferenceStorageClassName), not when
// it expands the instance, so Apply does not; the API server's defaulting of a VirtualMachine
// may call it. pref may be nil.
func ApplyVolumePreferences(pref *instancetypev1beta1.VirtualMachinePreferenceSpec, templates []kubevirtv1.DataVolumeTemplateSpec) {
	if pref == nil || pref.Volumes == nil || pref.Volumes.PreferredStorageClassName == "" {
		return
	}
	class := pref.Volumes.PreferredStorageClassName
	for i := range templates {
		spec := &templates[i].Spec
		if spec.PVC != nil && spec.PVC.StorageClassName == nil {
			spec.PVC.StorageClassName = new(class)
		}
		if spec.Storage != nil && spec.Storage.StorageClassName == nil {
			spec.Storage.StorageClassName = new(class)
		}
	}
}
