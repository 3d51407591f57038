package validation

import (
	"fmt"
	"net/url"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/nativevirt/nativevirt/pkg/apis/cdi/v1beta1"
)

// notSupportedYet ends the message of a field NativeVirt refuses until it implements it.
const notSupportedYet = "is not supported by NativeVirt yet"

// supportedAccessModes are the access modes CDI accepts for a DataVolume's claim.
var supportedAccessModes = []string{string(corev1.ReadOnlyMany), string(corev1.ReadWriteMany), string(corev1.ReadWriteOnce)}

// ValidateDataVolume validates a new DataVolume.
func ValidateDataVolume(dv *v1beta1.DataVolume) field.ErrorList {
	if dv == nil {
		return required()
	}
	errs := validateName(dv.Name)
	return append(errs, ValidateDataVolumeSpec(&dv.Spec, field.NewPath("spec"))...)
}

// ValidateDataVolumeUpdate validates a changed DataVolume: as in CDI, its spec cannot change
// (except the checkpoints of a multistage import from vddk or imageio), while its metadata may.
func ValidateDataVolumeUpdate(newDV, oldDV *v1beta1.DataVolume) field.ErrorList {
	if newDV == nil || oldDV == nil {
		return required()
	}
	if !apiequality.Semantic.DeepEqual(newDV.Spec, oldDV.Spec) && !onlyCheckpointsChanged(&newDV.Spec, &oldDV.Spec) {
		return field.ErrorList{field.Forbidden(field.NewPath("spec"), "Cannot update DataVolume Spec")}
	}
	return ValidateDataVolume(newDV)
}

// ValidateDataVolumeStatusUpdate validates a status write: the spec is kept by the strategy, the
// status needs only well-formed conditions.
func ValidateDataVolumeStatusUpdate(newDV, oldDV *v1beta1.DataVolume) field.ErrorList {
	if newDV == nil || oldDV == nil {
		return required()
	}
	var errs field.ErrorList
	path := field.NewPath("status")
	if newDV.Status.RestartCount < 0 {
		errs = append(errs, field.Invalid(path.Child("restartCount"), newDV.Status.RestartCount, "must not be negative"))
	}
	seen := map[v1beta1.DataVolumeConditionType]bool{}
	for i, c := range newDV.Status.Conditions {
		p := path.Child("conditions").Index(i)
		errs = append(errs, validateCondition(string(c.Type), c.Status, seen[c.Type], p)...)
		seen[c.Type] = true
	}
	return errs
}

// onlyCheckpointsChanged says whether a multistage import changed only its checkpoints.
func onlyCheckpointsChanged(newSpec, oldSpec *v1beta1.DataVolumeSpec) bool {
	multistage := newSpec.Source != nil && len(newSpec.Checkpoints) > 0 &&
		(newSpec.Source.VDDK != nil || newSpec.Source.Imageio != nil)
	if !multistage {
		return false
	}
	n, o := newSpec.DeepCopy(), oldSpec.DeepCopy()
	n.Checkpoints, o.Checkpoints = nil, nil
	n.FinalCheckpoint, o.FinalCheckpoint = false, false
	return apiequality.Semantic.DeepEqual(n, o)
}

// ValidateDataVolumeSpec validates a DataVolume spec found at path (also that of a VM's
// dataVolumeTemplates, once those are served).
func ValidateDataVolumeSpec(spec *v1beta1.DataVolumeSpec, path *field.Path) field.ErrorList {
	if spec == nil {
		return field.ErrorList{field.Required(path, "")}
	}
	var errs field.ErrorList
	switch {
	case spec.PVC == nil && spec.Storage == nil:
		return append(errs, field.Required(path.Child("pvc"), "Missing Data volume PVC: one of pvc or storage is required"))
	case spec.PVC != nil && spec.Storage != nil:
		return append(errs, field.Invalid(path.Child("storage"), "",
			"Duplicate storage definition, both target storage and target pvc defined"))
	}
	errs = append(errs, validateClaim(spec, path)...)
	errs = append(errs, validateContentType(spec.ContentType, path.Child("contentType"))...)
	if spec.Preallocation != nil && *spec.Preallocation {
		errs = append(errs, field.Forbidden(path.Child("preallocation"), "preallocation "+notSupportedYet))
	}
	if spec.PriorityClassName != "" {
		for _, msg := range apimachineryvalidation.NameIsDNSSubdomain(spec.PriorityClassName, false) {
			errs = append(errs, field.Invalid(path.Child("priorityClassName"), spec.PriorityClassName, msg))
		}
	}
	for i, c := range spec.Checkpoints {
		p := path.Child("checkpoints").Index(i)
		if c.Current == "" {
			errs = append(errs, field.Required(p.Child("current"), ""))
		}
	}

	if dataSource, dataSourceRef := claimDataSources(spec); dataSource != nil || dataSourceRef != nil {
		// An externally populated claim: a volume populator or the provisioner fills it.
		if spec.Source != nil || spec.SourceRef != nil {
			errs = append(errs, field.Invalid(path.Child("source"), "", "External population is incompatible with Source and SourceRef"))
		}
		p := path.Child("storage")
		if spec.PVC != nil {
			p = path.Child("pvc")
		}
		if dataSource != nil {
			p = p.Child("dataSource")
		} else {
			p = p.Child("dataSourceRef")
		}
		return append(errs, field.Forbidden(p, "external population (a volume populator) "+notSupportedYet))
	}
	switch {
	case spec.Source == nil && spec.SourceRef == nil:
		return append(errs, field.Required(path.Child("source"),
			"Data volume should have either Source or SourceRef, or be externally populated"))
	case spec.Source != nil && spec.SourceRef != nil:
		return append(errs, field.Invalid(path.Child("sourceRef"), "",
			"Data volume should have either Source or SourceRef, not both"))
	case spec.SourceRef != nil:
		return append(errs, validateSourceRef(spec.SourceRef, path.Child("sourceRef"))...)
	}
	return append(errs, validateSource(spec.Source, spec.ContentType, path.Child("source"))...)
}

// claimDataSources returns the claim's own data source fields (pvc or storage).
func claimDataSources(spec *v1beta1.DataVolumeSpec) (*corev1.TypedLocalObjectReference, *corev1.TypedObjectReference) {
	if spec.PVC != nil {
		return spec.PVC.DataSource, spec.PVC.DataSourceRef
	}
	return spec.Storage.DataSource, spec.Storage.DataSourceRef
}

// isClone says whether the data comes from another claim or snapshot, whose size a storage
// spec may inherit.
func isClone(spec *v1beta1.DataVolumeSpec) bool {
	return spec.SourceRef != nil || (spec.Source != nil && (spec.Source.PVC != nil || spec.Source.Snapshot != nil))
}

// validateClaim validates pvc or storage: a positive size (which only a clone's storage may
// omit), CDI's access modes, a volume mode, a storage class name and a selector.
func validateClaim(spec *v1beta1.DataVolumeSpec, path *field.Path) field.ErrorList {
	var (
		errs        field.ErrorList
		p           *field.Path
		requests    corev1.ResourceList
		accessModes []corev1.PersistentVolumeAccessMode
		volumeMode  *corev1.PersistentVolumeMode
		class       *string
	)
	if spec.PVC != nil {
		p = path.Child("pvc")
		requests, accessModes, volumeMode, class = spec.PVC.Resources.Requests, spec.PVC.AccessModes, spec.PVC.VolumeMode, spec.PVC.StorageClassName
		errs = append(errs, metav1validation.ValidateLabelSelector(spec.PVC.Selector, metav1validation.LabelSelectorValidationOptions{}, p.Child("selector"))...)
		switch {
		case len(accessModes) == 0:
			errs = append(errs, field.Required(p.Child("accessModes"), "at least 1 access mode is required"))
		case len(accessModes) > 1:
			errs = append(errs, field.Invalid(p.Child("accessModes"), accessModes, "PVC multiple accessModes"))
		}
	} else {
		p = path.Child("storage")
		requests, accessModes, volumeMode, class = spec.Storage.Resources.Requests, spec.Storage.AccessModes, spec.Storage.VolumeMode, spec.Storage.StorageClassName
		errs = append(errs, metav1validation.ValidateLabelSelector(spec.Storage.Selector, metav1validation.LabelSelectorValidationOptions{}, p.Child("selector"))...)
	}
	for i, m := range accessModes {
		if !contains(supportedAccessModes, string(m)) {
			errs = append(errs, field.NotSupported(p.Child("accessModes").Index(i), m, supportedAccessModes))
		}
	}
	if volumeMode != nil {
		modes := []string{string(corev1.PersistentVolumeBlock), string(corev1.PersistentVolumeFilesystem)}
		if spec.Storage != nil {
			modes = append(modes, string(v1beta1.PersistentVolumeFromStorageProfile))
		}
		if !contains(modes, string(*volumeMode)) {
			errs = append(errs, field.NotSupported(p.Child("volumeMode"), *volumeMode, modes))
		}
	}
	if class != nil && *class != "" {
		for _, msg := range apimachineryvalidation.NameIsDNSSubdomain(*class, false) {
			errs = append(errs, field.Invalid(p.Child("storageClassName"), *class, msg))
		}
	}
	sizePath := p.Child("resources", "requests", string(corev1.ResourceStorage))
	if size, ok := requests[corev1.ResourceStorage]; ok {
		if size.Sign() <= 0 {
			errs = append(errs, field.Invalid(sizePath, size.String(), "size can't be equal or less than zero"))
		}
	} else if spec.Storage == nil || !isClone(spec) {
		errs = append(errs, field.Required(sizePath, "size is missing (only a clone's storage may omit it)"))
	}
	return errs
}

// validateContentType accepts "" (kubevirt), kubevirt and archive.
func validateContentType(ct v1beta1.DataVolumeContentType, path *field.Path) field.ErrorList {
	switch ct {
	case "", v1beta1.DataVolumeKubeVirt:
		return nil
	case v1beta1.DataVolumeArchive:
		return field.ErrorList{field.Forbidden(path, "contentType archive (unpacking a tar into the claim) "+notSupportedYet)}
	}
	return field.ErrorList{field.NotSupported(path, ct, []string{string(v1beta1.DataVolumeKubeVirt), string(v1beta1.DataVolumeArchive)})}
}

// validateSourceRef accepts a reference to a DataSource by name.
func validateSourceRef(ref *v1beta1.DataVolumeSourceRef, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	switch ref.Kind {
	case "":
		errs = append(errs, field.Required(path.Child("kind"), "Missing sourceRef kind"))
	case v1beta1.DataVolumeDataSource:
	default:
		errs = append(errs, field.NotSupported(path.Child("kind"), ref.Kind, []string{v1beta1.DataVolumeDataSource}))
	}
	errs = append(errs, validateObjectName(ref.Name, path.Child("name"), "Missing sourceRef name")...)
	if ref.Namespace != nil && *ref.Namespace != "" {
		errs = append(errs, validateNamespace(*ref.Namespace, path.Child("namespace"))...)
	}
	return errs
}

// validateSource checks that exactly one source kind is set and validates it.
func validateSource(src *v1beta1.DataVolumeSource, ct v1beta1.DataVolumeContentType, path *field.Path) field.ErrorList {
	set := setSources(src)
	switch len(set) {
	case 0:
		return field.ErrorList{field.Required(path, "Missing Data volume source: one of http, registry, pvc, snapshot, upload or blank is required")}
	case 1:
	default:
		return field.ErrorList{field.Invalid(path, strings.Join(set, ", "),
			"Multiple Data volume sources: exactly one source kind may be set")}
	}
	var errs field.ErrorList
	switch {
	case src.HTTP != nil:
		errs = append(errs, validateHTTP(src.HTTP, path.Child("http"))...)
	case src.Registry != nil:
		errs = append(errs, validateRegistry(src.Registry, ct, path.Child("registry"))...)
	case src.PVC != nil:
		errs = append(errs, validateObjectName(src.PVC.Name, path.Child("pvc", "name"), "source PVC is not valid: name is required")...)
		errs = append(errs, validateRequiredNamespace(src.PVC.Namespace, path.Child("pvc", "namespace"), "source PVC is not valid: namespace is required")...)
	case src.Snapshot != nil:
		errs = append(errs, validateObjectName(src.Snapshot.Name, path.Child("snapshot", "name"), "source snapshot is not valid: name is required")...)
		errs = append(errs, validateRequiredNamespace(src.Snapshot.Namespace, path.Child("snapshot", "namespace"), "source snapshot is not valid: namespace is required")...)
		errs = append(errs, field.Forbidden(path.Child("snapshot"), "cloning from a VolumeSnapshot "+notSupportedYet))
	case src.Blank != nil:
		if ct == v1beta1.DataVolumeArchive {
			errs = append(errs, field.Invalid(path.Child("blank"), "", "SourceType cannot be blank and the contentType be archive"))
		}
	case src.Upload != nil:
		// Filled through the upload proxy (virtctl image-upload); nothing to check.
	case src.S3 != nil:
		errs = append(errs, field.Forbidden(path.Child("s3"), "importing from S3 "+notSupportedYet))
	case src.GCS != nil:
		errs = append(errs, field.Forbidden(path.Child("gcs"), "importing from GCS "+notSupportedYet))
	case src.Imageio != nil:
		errs = append(errs, field.Forbidden(path.Child("imageio"), "importing from oVirt imageio "+notSupportedYet))
	case src.VDDK != nil:
		errs = append(errs, field.Forbidden(path.Child("vddk"), "importing from VMware (VDDK) "+notSupportedYet))
	}
	return errs
}

// setSources names the source kinds set, in the field order of DataVolumeSource.
func setSources(src *v1beta1.DataVolumeSource) []string {
	var set []string
	for _, s := range []struct {
		name string
		set  bool
	}{
		{"http", src.HTTP != nil}, {"s3", src.S3 != nil}, {"gcs", src.GCS != nil}, {"registry", src.Registry != nil},
		{"pvc", src.PVC != nil}, {"upload", src.Upload != nil}, {"blank", src.Blank != nil}, {"imageio", src.Imageio != nil},
		{"vddk", src.VDDK != nil}, {"snapshot", src.Snapshot != nil},
	} {
		if s.set {
			set = append(set, s.name)
		}
	}
	return set
}

// validateHTTP accepts an absolute http or https URL and well-formed references and headers.
func validateHTTP(h *v1beta1.DataVolumeSourceHTTP, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if h.URL == "" {
		errs = append(errs, field.Required(path.Child("url"), "source URL is required"))
	} else if u, err := url.ParseRequestURI(h.URL); err != nil {
		errs = append(errs, field.Invalid(path.Child("url"), h.URL, fmt.Sprintf("Invalid source URL: %v", err)))
	} else if u.Scheme != "http" && u.Scheme != "https" {
		errs = append(errs, field.Invalid(path.Child("url"), h.URL, "Invalid source URL: the scheme must be http or https"))
	} else if u.Host == "" {
		errs = append(errs, field.Invalid(path.Child("url"), h.URL, "Invalid source URL: no host"))
	}
	errs = append(errs, validateOptionalName(h.SecretRef, path.Child("secretRef"))...)
	errs = append(errs, validateOptionalName(h.CertConfigMap, path.Child("certConfigMap"))...)
	for i, hdr := range h.ExtraHeaders {
		if name, _, ok := strings.Cut(hdr, ":"); !ok || strings.TrimSpace(name) == "" {
			errs = append(errs, field.Invalid(path.Child("extraHeaders").Index(i), hdr, `must be a header "Name: value"`))
		}
	}
	for i, s := range h.SecretExtraHeaders {
		errs = append(errs, validateObjectName(s, path.Child("secretExtraHeaders").Index(i), "a Secret name is required")...)
	}
	return errs
}

// validateRegistry accepts exactly one of url (docker:// or oci-archive://) and imageStream, the
// pull methods pod and node, and (as CDI) only the kubevirt content type.
func validateRegistry(r *v1beta1.DataVolumeSourceRegistry, ct v1beta1.DataVolumeContentType, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	hasURL, hasStream := r.URL != nil && *r.URL != "", r.ImageStream != nil && *r.ImageStream != ""
	switch {
	case hasURL == hasStream:
		errs = append(errs, field.Invalid(path.Child("url"), "", "Source registry should have either URL or ImageStream"))
	case hasURL:
		u := *r.URL
		scheme, rest, ok := strings.Cut(u, "://")
		if !ok || (scheme != v1beta1.RegistrySchemeDocker && scheme != v1beta1.RegistrySchemeOci) {
			errs = append(errs, field.Invalid(path.Child("url"), u, "Illegal registry source URL scheme: must start with docker:// or oci-archive://"))
		} else if rest == "" {
			errs = append(errs, field.Invalid(path.Child("url"), u, "Invalid source URL: no image"))
		} else if _, err := url.Parse(u); err != nil {
			errs = append(errs, field.Invalid(path.Child("url"), u, fmt.Sprintf("Invalid source URL: %v", err)))
		}
	}
	if r.PullMethod != nil {
		switch *r.PullMethod {
		case v1beta1.RegistryPullPod, v1beta1.RegistryPullNode:
		default:
			errs = append(errs, field.NotSupported(path.Child("pullMethod"), *r.PullMethod,
				[]string{string(v1beta1.RegistryPullPod), string(v1beta1.RegistryPullNode)}))
		}
	}
	if hasStream && !hasURL && (r.PullMethod == nil || *r.PullMethod != v1beta1.RegistryPullNode) {
		errs = append(errs, field.Invalid(path.Child("imageStream"), *r.ImageStream, "Source registry ImageStream is supported only with node pull import method"))
	}
	if r.SecretRef != nil {
		errs = append(errs, validateOptionalName(*r.SecretRef, path.Child("secretRef"))...)
	}
	if r.CertConfigMap != nil {
		errs = append(errs, validateOptionalName(*r.CertConfigMap, path.Child("certConfigMap"))...)
	}
	if ct == v1beta1.DataVolumeArchive {
		errs = append(errs, field.Invalid(path, "", "ContentType must be kubevirt when Source is Registry"))
	}
	if len(errs) > 0 {
		return errs
	}
	return registryNotSupported(r, hasURL, hasStream, path)
}

// registryNotSupported refuses what NativeVirt's registry import lacks: it reads docker://
// images from the node's container runtime (pullMethod node) only.
func registryNotSupported(r *v1beta1.DataVolumeSourceRegistry, hasURL, hasStream bool, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if hasURL && strings.HasPrefix(*r.URL, v1beta1.RegistrySchemeOci+"://") {
		errs = append(errs, field.Forbidden(path.Child("url"), "an oci-archive:// URL "+notSupportedYet+": use docker:// with pullMethod node"))
	}
	if hasStream {
		errs = append(errs, field.Forbidden(path.Child("imageStream"), "importing from an OpenShift image stream "+notSupportedYet))
	}
	if r.PullMethod == nil || *r.PullMethod == v1beta1.RegistryPullPod {
		errs = append(errs, field.Forbidden(path.Child("pullMethod"),
			"pullMethod pod (the default: the importer pulls from the registry itself) is "+notSupportedYet+
				": set pullMethod node (the node's container runtime pulls the image)"))
	}
	if r.SecretRef != nil && *r.SecretRef != "" {
		errs = append(errs, field.Forbidden(path.Child("secretRef"), "a registry secretRef (used by pullMethod pod) "+notSupportedYet+
			": with pullMethod node the node's runtime pulls with its own credentials"))
	}
	if r.CertConfigMap != nil && *r.CertConfigMap != "" {
		errs = append(errs, field.Forbidden(path.Child("certConfigMap"), "a registry certConfigMap (used by pullMethod pod) "+notSupportedYet))
	}
	return errs
}

// validateCondition checks one status condition.
func validateCondition(typ string, status corev1.ConditionStatus, duplicate bool, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if typ == "" {
		errs = append(errs, field.Required(path.Child("type"), ""))
	} else if duplicate {
		errs = append(errs, field.Duplicate(path.Child("type"), typ))
	}
	switch status {
	case corev1.ConditionTrue, corev1.ConditionFalse, corev1.ConditionUnknown:
	default:
		errs = append(errs, field.NotSupported(path.Child("status"), status,
			[]string{string(corev1.ConditionTrue), string(corev1.ConditionFalse), string(corev1.ConditionUnknown)}))
	}
	return errs
}
