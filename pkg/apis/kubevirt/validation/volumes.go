package validation

import (
	"encoding/base64"
	"fmt"
	"path"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation/field"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
)

// MaxCloudInitSize caps the user and network data of one cloud-init volume together, in bytes.
// KubeVirt's 2 KiB cap on inline data is too small for real cloud-configs; 1 MiB keeps objects
// well below etcd's request limit.
const MaxCloudInitSize = 1 << 20

var (
	pullPolicies  = []corev1.PullPolicy{corev1.PullAlways, corev1.PullNever, corev1.PullIfNotPresent}
	hostDiskTypes = []kubevirtv1.HostDiskType{kubevirtv1.HostDiskExists, kubevirtv1.HostDiskExistsOrCreate}
)

// validateVolumes checks every volume and returns the set of valid volume names, which disks
// must match.
func validateVolumes(volumes []kubevirtv1.Volume, fldPath *field.Path) (field.ErrorList, nameSet) {
	var errs field.ErrorList
	names := nameSet{}
	cloudInit := -1
	for i := range volumes {
		v := &volumes[i]
		volumePath := fldPath.Index(i)
		namePath := volumePath.Child("name")
		errs = append(errs, validateDNSLabel(v.Name, namePath)...)
		errs = appendErr(errs, names.add(v.Name, namePath))
		errs = append(errs, validateVolumeSource(&v.VolumeSource, volumePath)...)
		errs = append(errs, check(unsupportedVolumeFields, v, volumePath)...)
		if v.CloudInitNoCloud != nil || v.CloudInitConfigDrive != nil {
			if cloudInit >= 0 {
				errs = append(errs, field.Invalid(volumePath, v.Name,
					fmt.Sprintf("only one cloud-init volume is allowed; %s already is one", fldPath.Index(cloudInit))))
			} else {
				cloudInit = i
			}
		}
	}
	errs = append(errs, validateConfigVolumes(volumes, fldPath)...)
	return errs, names
}

// volumeSources lists the names of the sources set on a volume.
func volumeSources(s *kubevirtv1.VolumeSource) []string {
	var set []string
	for _, src := range []struct {
		name string
		set  bool
	}{
		{"hostDisk", s.HostDisk != nil},
		{"persistentVolumeClaim", s.PersistentVolumeClaim != nil},
		{"cloudInitNoCloud", s.CloudInitNoCloud != nil},
		{"cloudInitConfigDrive", s.CloudInitConfigDrive != nil},
		{"sysprep", s.Sysprep != nil},
		{"containerDisk", s.ContainerDisk != nil},
		{"ephemeral", s.Ephemeral != nil},
		{"emptyDisk", s.EmptyDisk != nil},
		{"dataVolume", s.DataVolume != nil},
		{"configMap", s.ConfigMap != nil},
		{"secret", s.Secret != nil},
		{"downwardAPI", s.DownwardAPI != nil},
		{"serviceAccount", s.ServiceAccount != nil},
		{"downwardMetrics", s.DownwardMetrics != nil},
		{"memoryDump", s.MemoryDump != nil},
	} {
		if src.set {
			set = append(set, src.name)
		}
	}
	return set
}

// validateVolumeSource requires exactly one source and checks the supported ones.
func validateVolumeSource(s *kubevirtv1.VolumeSource, volumePath *field.Path) field.ErrorList {
	switch set := volumeSources(s); len(set) {
	case 0:
		return field.ErrorList{field.Required(volumePath, "exactly one volume source must be set")}
	case 1:
	default:
		return field.ErrorList{field.Invalid(volumePath, set, "exactly one volume source must be set")}
	}
	var errs field.ErrorList
	if c := s.ContainerDisk; c != nil {
		cPath := volumePath.Child("containerDisk")
		if c.Image == "" {
			errs = append(errs, field.Required(cPath.Child("image"), ""))
		}
		if c.Path != "" && !path.IsAbs(c.Path) {
			errs = append(errs, field.Invalid(cPath.Child("path"), c.Path, "must be an absolute path"))
		}
		errs = append(errs, validatePullPolicy(c.ImagePullPolicy, cPath.Child("imagePullPolicy"))...)
	}
	if c := s.CloudInitNoCloud; c != nil {
		errs = append(errs, validateCloudInit(cloudInitData{c.UserData, c.UserDataBase64, c.UserDataSecretRef,
			c.NetworkData, c.NetworkDataBase64, c.NetworkDataSecretRef}, volumePath.Child("cloudInitNoCloud"))...)
	}
	if c := s.CloudInitConfigDrive; c != nil {
		errs = append(errs, validateCloudInit(cloudInitData{c.UserData, c.UserDataBase64, c.UserDataSecretRef,
			c.NetworkData, c.NetworkDataBase64, c.NetworkDataSecretRef}, volumePath.Child("cloudInitConfigDrive"))...)
	}
	if e := s.EmptyDisk; e != nil {
		errs = append(errs, validatePositiveQuantity(e.Capacity, volumePath.Child("emptyDisk", "capacity"))...)
	}
	if h := s.HostDisk; h != nil {
		errs = append(errs, validateHostDisk(h, volumePath.Child("hostDisk"))...)
	}
	if p := s.PersistentVolumeClaim; p != nil && p.ClaimName == "" {
		errs = append(errs, field.Required(volumePath.Child("persistentVolumeClaim", "claimName"), ""))
	}
	if d := s.DataVolume; d != nil {
		errs = append(errs, validateDataVolumeVolume(d, volumePath.Child("dataVolume"))...)
	}
	if e := s.Ephemeral; e != nil {
		pvcPath := volumePath.Child("ephemeral", "persistentVolumeClaim")
		if e.PersistentVolumeClaim == nil {
			errs = append(errs, field.Required(pvcPath, ""))
		} else if e.PersistentVolumeClaim.ClaimName == "" {
			errs = append(errs, field.Required(pvcPath.Child("claimName"), ""))
		}
	}
	return errs
}

// cloudInitData is what NoCloud and ConfigDrive sources have in common.
type cloudInitData struct {
	userData, userDataBase64       string
	userDataSecretRef              *corev1.LocalObjectReference
	networkData, networkDataBase64 string
	networkDataSecretRef           *corev1.LocalObjectReference
}

// validateCloudInit allows user data and network data each from at most one place, requires
// some data, checks base64 and caps the inline size.
func validateCloudInit(c cloudInitData, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, kind := range []struct {
		plain, encoded, ref string
		plainVal, encVal    string
		refVal              *corev1.LocalObjectReference
	}{
		{"userData", "userDataBase64", "secretRef", c.userData, c.userDataBase64, c.userDataSecretRef},
		{"networkData", "networkDataBase64", "networkDataSecretRef", c.networkData, c.networkDataBase64, c.networkDataSecretRef},
	} {
		var set []string
		if kind.plainVal != "" {
			set = append(set, kind.plain)
		}
		if kind.encVal != "" {
			set = append(set, kind.encoded)
			if _, err := base64.StdEncoding.DecodeString(kind.encVal); err != nil {
				errs = append(errs, field.Invalid(fldPath.Child(kind.encoded), field.OmitValueType{},
					"must be valid base64: "+err.Error()))
			}
		}
		if kind.refVal != nil {
			set = append(set, kind.ref)
			if kind.refVal.Name == "" {
				errs = append(errs, field.Required(fldPath.Child(kind.ref, "name"), ""))
			}
		}
		if len(set) > 1 {
			errs = append(errs, field.Invalid(fldPath, set,
				fmt.Sprintf("at most one of %s, %s and %s may be set", kind.plain, kind.encoded, kind.ref)))
		}
	}
	if c.userData == "" && c.userDataBase64 == "" && c.userDataSecretRef == nil &&
		c.networkData == "" && c.networkDataBase64 == "" && c.networkDataSecretRef == nil {
		errs = append(errs, field.Required(fldPath, "at least one of userData, userDataBase64, secretRef, "+
			"networkData, networkDataBase64 and networkDataSecretRef must be set"))
	}
	if size := len(c.userData) + len(c.userDataBase64) + len(c.networkData) + len(c.networkDataBase64); size > MaxCloudInitSize {
		errs = append(errs, field.TooLong(fldPath, "", MaxCloudInitSize))
	}
	return errs
}

// validateHostDisk requires a clean absolute path and a known type, and a capacity when the
// image may be created.
func validateHostDisk(h *kubevirtv1.HostDisk, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	switch {
	case h.Path == "":
		errs = append(errs, field.Required(fldPath.Child("path"), ""))
	case !path.IsAbs(h.Path) || path.Clean(h.Path) != h.Path:
		errs = append(errs, field.Invalid(fldPath.Child("path"), h.Path, "must be a clean absolute path"))
	}
	switch {
	case h.Type == "":
		errs = append(errs, field.Required(fldPath.Child("type"), ""))
	case !contains(hostDiskTypes, h.Type):
		errs = append(errs, field.NotSupported(fldPath.Child("type"), string(h.Type), hostDiskTypes))
	}
	capacityPath := fldPath.Child("capacity")
	switch {
	case h.Capacity.Sign() < 0:
		errs = append(errs, field.Invalid(capacityPath, h.Capacity.String(), "must be greater than 0"))
	case h.Type == kubevirtv1.HostDiskExistsOrCreate && h.Capacity.IsZero():
		errs = append(errs, field.Required(capacityPath, "required with type DiskOrCreate"))
	}
	return errs
}

// validatePositiveQuantity requires a quantity greater than zero.
func validatePositiveQuantity(q resource.Quantity, fldPath *field.Path) field.ErrorList {
	if q.Sign() <= 0 {
		return field.ErrorList{field.Invalid(fldPath, q.String(), "must be greater than 0")}
	}
	return nil
}

// validatePullPolicy accepts an empty policy or one of Always, Never and IfNotPresent.
func validatePullPolicy(p corev1.PullPolicy, fldPath *field.Path) field.ErrorList {
	if p == "" || contains(pullPolicies, p) {
		return nil
	}
	return field.ErrorList{field.NotSupported(fldPath, string(p), pullPolicies)}
}
