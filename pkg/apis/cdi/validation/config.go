package validation

import (
	"maps"
	"regexp"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/nativevirt/nativevirt/pkg/apis/cdi/v1beta1"
)

// maxClaimPropertySets and maxAccessModes are the bounds CDI's CRD puts on a StorageProfile.
const (
	maxClaimPropertySets = 8
	maxAccessModes       = 4
)

// percentPattern is CDI's pattern of a filesystem overhead: 0 to 1 with up to three decimals.
var percentPattern = regexp.MustCompile(`^(0(?:\.\d{1,3})?|1)$`)

// ValidateStorageProfile validates a new or changed StorageProfile (its spec may change).
func ValidateStorageProfile(sp *v1beta1.StorageProfile) field.ErrorList {
	if sp == nil {
		return required()
	}
	path := field.NewPath("spec")
	errs := validateName(sp.Name)
	errs = append(errs, validateCloneStrategy(sp.Spec.CloneStrategy, path.Child("cloneStrategy"))...)
	errs = append(errs, validateClaimPropertySets(sp.Spec.ClaimPropertySets, path.Child("claimPropertySets"))...)
	errs = append(errs, validateSourceFormat(sp.Spec.DataImportCronSourceFormat, path.Child("dataImportCronSourceFormat"))...)
	if sp.Spec.SnapshotClass != nil {
		errs = append(errs, validateOptionalName(*sp.Spec.SnapshotClass, path.Child("snapshotClass"))...)
	}
	return errs
}

// ValidateStorageProfileUpdate validates a changed StorageProfile.
func ValidateStorageProfileUpdate(newSP, oldSP *v1beta1.StorageProfile) field.ErrorList {
	if newSP == nil || oldSP == nil {
		return required()
	}
	return ValidateStorageProfile(newSP)
}

// ValidateStorageProfileStatusUpdate validates a status write.
func ValidateStorageProfileStatusUpdate(newSP, oldSP *v1beta1.StorageProfile) field.ErrorList {
	if newSP == nil || oldSP == nil {
		return required()
	}
	path := field.NewPath("status")
	errs := validateCloneStrategy(newSP.Status.CloneStrategy, path.Child("cloneStrategy"))
	errs = append(errs, validateClaimPropertySets(newSP.Status.ClaimPropertySets, path.Child("claimPropertySets"))...)
	return append(errs, validateSourceFormat(newSP.Status.DataImportCronSourceFormat, path.Child("dataImportCronSourceFormat"))...)
}

func validateCloneStrategy(s *v1beta1.CDICloneStrategy, path *field.Path) field.ErrorList {
	if s == nil {
		return nil
	}
	switch *s {
	case v1beta1.CloneStrategyHostAssisted, v1beta1.CloneStrategySnapshot, v1beta1.CloneStrategyCsiClone:
		return nil
	}
	return field.ErrorList{field.NotSupported(path, *s, []string{string(v1beta1.CloneStrategyHostAssisted),
		string(v1beta1.CloneStrategySnapshot), string(v1beta1.CloneStrategyCsiClone)})}
}

func validateSourceFormat(f *v1beta1.DataImportCronSourceFormat, path *field.Path) field.ErrorList {
	if f == nil {
		return nil
	}
	switch *f {
	case v1beta1.DataImportCronSourceFormatPvc, v1beta1.DataImportCronSourceFormatSnapshot:
		return nil
	}
	return field.ErrorList{field.NotSupported(path, *f, []string{string(v1beta1.DataImportCronSourceFormatPvc),
		string(v1beta1.DataImportCronSourceFormatSnapshot)})}
}

// validateClaimPropertySets holds the sets to CDI's CRD schema: at most 8, each with at most 4
// known access modes and a volume mode Block or Filesystem.
func validateClaimPropertySets(sets []v1beta1.ClaimPropertySet, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if len(sets) > maxClaimPropertySets {
		errs = append(errs, field.TooMany(path, len(sets), maxClaimPropertySets))
	}
	allModes := []string{string(corev1.ReadWriteOnce), string(corev1.ReadOnlyMany), string(corev1.ReadWriteMany), string(corev1.ReadWriteOncePod)}
	for i, s := range sets {
		p := path.Index(i)
		if len(s.AccessModes) > maxAccessModes {
			errs = append(errs, field.TooMany(p.Child("accessModes"), len(s.AccessModes), maxAccessModes))
		}
		for j, m := range s.AccessModes {
			if !contains(allModes, string(m)) {
				errs = append(errs, field.NotSupported(p.Child("accessModes").Index(j), m, allModes))
			}
		}
		modes := []string{string(corev1.PersistentVolumeBlock), string(corev1.PersistentVolumeFilesystem)}
		if s.VolumeMode == nil {
			errs = append(errs, field.Required(p.Child("volumeMode"), ""))
		} else if !contains(modes, string(*s.VolumeMode)) {
			errs = append(errs, field.NotSupported(p.Child("volumeMode"), *s.VolumeMode, modes))
		}
	}
	return errs
}

// ValidateCDIConfig validates a new or changed CDIConfig: it must be named `config` (the one
// object CDI and virtctl read), its overheads are fractions and its quantities not negative.
func ValidateCDIConfig(c *v1beta1.CDIConfig) field.ErrorList {
	if c == nil {
		return required()
	}
	var errs field.ErrorList
	if c.Name != "" && c.Name != v1beta1.CDIConfigName {
		errs = append(errs, field.NotSupported(field.NewPath("metadata", "name"), c.Name, []string{v1beta1.CDIConfigName}))
	}
	path := field.NewPath("spec")
	errs = append(errs, validateOverhead(c.Spec.FilesystemOverhead, path.Child("filesystemOverhead"))...)
	errs = append(errs, validateResources(c.Spec.PodResourceRequirements, path.Child("podResourceRequirements"))...)
	if c.Spec.ScratchSpaceStorageClass != nil {
		errs = append(errs, validateOptionalName(*c.Spec.ScratchSpaceStorageClass, path.Child("scratchSpaceStorageClass"))...)
	}
	if v := c.Spec.LogVerbosity; v != nil && *v < 0 {
		errs = append(errs, field.Invalid(path.Child("logVerbosity"), *v, "must not be negative"))
	}
	if v := c.Spec.DataVolumeTTLSeconds; v != nil && *v < 0 {
		errs = append(errs, field.Invalid(path.Child("dataVolumeTTLSeconds"), *v, "must not be negative"))
	}
	for i, s := range c.Spec.ImagePullSecrets {
		errs = append(errs, validateObjectName(s.Name, path.Child("imagePullSecrets").Index(i).Child("name"), "")...)
	}
	return errs
}

// ValidateCDIConfigUpdate validates a changed CDIConfig.
func ValidateCDIConfigUpdate(newC, oldC *v1beta1.CDIConfig) field.ErrorList {
	if newC == nil || oldC == nil {
		return required()
	}
	return ValidateCDIConfig(newC)
}

// ValidateCDIConfigStatusUpdate validates a status write.
func ValidateCDIConfigStatusUpdate(newC, oldC *v1beta1.CDIConfig) field.ErrorList {
	if newC == nil || oldC == nil {
		return required()
	}
	path := field.NewPath("status")
	errs := validateOverhead(newC.Status.FilesystemOverhead, path.Child("filesystemOverhead"))
	return append(errs, validateResources(newC.Status.DefaultPodResourceRequirements, path.Child("defaultPodResourceRequirements"))...)
}

func validateOverhead(o *v1beta1.FilesystemOverhead, path *field.Path) field.ErrorList {
	if o == nil {
		return nil
	}
	var errs field.ErrorList
	const msg = "must be a fraction between 0 and 1 with up to three decimals (e.g. 0.055)"
	if o.Global != "" && !percentPattern.MatchString(string(o.Global)) {
		errs = append(errs, field.Invalid(path.Child("global"), o.Global, msg))
	}
	for _, class := range slices.Sorted(maps.Keys(o.StorageClass)) {
		p := o.StorageClass[class]
		if !percentPattern.MatchString(string(p)) {
			errs = append(errs, field.Invalid(path.Child("storageClass").Key(class), p, msg))
		}
	}
	return errs
}

func validateResources(r *corev1.ResourceRequirements, path *field.Path) field.ErrorList {
	if r == nil {
		return nil
	}
	var errs field.ErrorList
	for _, l := range []struct {
		name string
		list corev1.ResourceList
	}{{"limits", r.Limits}, {"requests", r.Requests}} {
		for _, res := range slices.Sorted(maps.Keys(l.list)) {
			q, name := l.list[res], l.name
			if q.Cmp(resource.Quantity{}) < 0 {
				errs = append(errs, field.Invalid(path.Child(name).Key(string(res)), q.String(), "must not be negative"))
			}
		}
	}
	return errs
}
