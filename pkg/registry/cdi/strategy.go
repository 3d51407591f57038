package cdi

import (
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/nativevirt/nativevirt/pkg/apis/cdi/v1beta1"
	"github.com/nativevirt/nativevirt/pkg/apis/cdi/validation"
	"github.com/nativevirt/nativevirt/pkg/registry/store"
)

// kindRules are what tells the kinds apart in their strategies.
type kindRules[T any] struct {
	// spec returns the object's spec, compared to tell a spec change from a metadata change.
	spec func(T) any
	// clearStatus empties the status of a created object; keepStatus restores the old status on a
	// main-resource write; keepSpec restores the old spec on a /status write.
	clearStatus          func(T)
	keepStatus, keepSpec func(newObj, oldObj T)
	validate             func(T) field.ErrorList
	validateUpdate       func(newObj, oldObj T) field.ErrorList
	validateStatusUpdate func(newObj, oldObj T) field.ErrorList
}

// object is an API object with metadata.
type object interface {
	runtime.Object
	metav1.Object
}

// rules builds the strategy rules of a kind with status.
func rules[T object](k kindRules[T]) store.Rules[T] {
	return store.Rules[T]{
		PrepareForCreate: func(obj T) {
			k.clearStatus(obj)
			obj.SetGeneration(1)
		},
		PrepareForUpdate: func(newObj, oldObj T) {
			k.keepStatus(newObj, oldObj)
			if !apiequality.Semantic.DeepEqual(k.spec(newObj), k.spec(oldObj)) {
				newObj.SetGeneration(oldObj.GetGeneration() + 1)
			}
		},
		PrepareForStatusUpdate: func(newObj, oldObj T) {
			k.keepSpec(newObj, oldObj)
			keepMetadata(newObj, oldObj)
		},
		Validate:             k.validate,
		ValidateUpdate:       k.validateUpdate,
		ValidateStatusUpdate: k.validateStatusUpdate,
	}
}

// keepMetadata undoes the metadata changes a /status write made (store.KeepMetadata).
func keepMetadata(newObj, oldObj metav1.Object) {
	newObj.SetLabels(oldObj.GetLabels())
	newObj.SetAnnotations(oldObj.GetAnnotations())
	newObj.SetFinalizers(oldObj.GetFinalizers())
	newObj.SetOwnerReferences(oldObj.GetOwnerReferences())
}

// The rules of the four kinds.
var (
	DataVolumeRules = rules(kindRules[*v1beta1.DataVolume]{
		spec:                 func(o *v1beta1.DataVolume) any { return &o.Spec },
		clearStatus:          func(o *v1beta1.DataVolume) { o.Status = v1beta1.DataVolumeStatus{} },
		keepStatus:           func(n, o *v1beta1.DataVolume) { n.Status = o.Status },
		keepSpec:             func(n, o *v1beta1.DataVolume) { n.Spec = o.Spec },
		validate:             validation.ValidateDataVolume,
		validateUpdate:       validation.ValidateDataVolumeUpdate,
		validateStatusUpdate: validation.ValidateDataVolumeStatusUpdate,
	})
	DataSourceRules = rules(kindRules[*v1beta1.DataSource]{
		spec:                 func(o *v1beta1.DataSource) any { return &o.Spec },
		clearStatus:          func(o *v1beta1.DataSource) { o.Status = v1beta1.DataSourceStatus{} },
		keepStatus:           func(n, o *v1beta1.DataSource) { n.Status = o.Status },
		keepSpec:             func(n, o *v1beta1.DataSource) { n.Spec = o.Spec },
		validate:             validation.ValidateDataSource,
		validateUpdate:       validation.ValidateDataSourceUpdate,
		validateStatusUpdate: validation.ValidateDataSourceStatusUpdate,
	})
	StorageProfileRules = rules(kindRules[*v1beta1.StorageProfile]{
		spec:                 func(o *v1beta1.StorageProfile) any { return &o.Spec },
		clearStatus:          func(o *v1beta1.StorageProfile) { o.Status = v1beta1.StorageProfileStatus{} },
		keepStatus:           func(n, o *v1beta1.StorageProfile) { n.Status = o.Status },
		keepSpec:             func(n, o *v1beta1.StorageProfile) { n.Spec = o.Spec },
		validate:             validation.ValidateStorageProfile,
		validateUpdate:       validation.ValidateStorageProfileUpdate,
		validateStatusUpdate: validation.ValidateStorageProfileStatusUpdate,
	})
	CDIConfigRules = rules(kindRules[*v1beta1.CDIConfig]{
		spec:                 func(o *v1beta1.CDIConfig) any { return &o.Spec },
		clearStatus:          func(o *v1beta1.CDIConfig) { o.Status = v1beta1.CDIConfigStatus{} },
		keepStatus:           func(n, o *v1beta1.CDIConfig) { n.Status = o.Status },
		keepSpec:             func(n, o *v1beta1.CDIConfig) { n.Spec = o.Spec },
		validate:             validation.ValidateCDIConfig,
		validateUpdate:       validation.ValidateCDIConfigUpdate,
		validateStatusUpdate: validation.ValidateCDIConfigStatusUpdate,
	})
)
