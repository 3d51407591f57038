package store

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/registry/generic"
	genericregistry "k8s.io/apiserver/pkg/registry/generic/registry"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/apiserver/pkg/storage"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
)

// Strategy is what a resource's main strategy implements: create, update and delete rules plus the
// fields server-side apply resets.
type Strategy interface {
	rest.RESTCreateStrategy
	rest.RESTUpdateStrategy
	rest.RESTDeleteStrategy
	rest.ResetFieldsStrategy
}

// StatusStrategy is what a resource's /status strategy implements.
type StatusStrategy interface {
	rest.RESTUpdateStrategy
	rest.ResetFieldsStrategy
}

// Resource describes one resource to store.
type Resource struct {
	// Plural and Singular are qualified resource names, e.g. virtualmachines.kubevirt.io.
	Plural, Singular schema.GroupResource
	NewFunc          func() runtime.Object
	NewListFunc      func() runtime.Object
	// SelectableFields returns the fields a field selector may name for one object.
	SelectableFields func(obj runtime.Object) (labels.Set, fields.Set, error)
	Strategy         Strategy
	// StatusStrategy is nil for a resource without status (and without /status).
	StatusStrategy StatusStrategy
	Table          rest.TableConvertor
}

// New builds the main store and the /status store of a resource. Both share the same storage; the
// status store only swaps the update strategy. A resource without a StatusStrategy gets no status
// store (nil).
func New(r Resource, optsGetter generic.RESTOptionsGetter) (*genericregistry.Store, *StatusREST, error) {
	s := &genericregistry.Store{
		NewFunc:     r.NewFunc,
		NewListFunc: r.NewListFunc,
		PredicateFunc: func(label labels.Selector, field fields.Selector) storage.SelectionPredicate {
			return storage.SelectionPredicate{Label: label, Field: field, GetAttrs: r.SelectableFields}
		},
		DefaultQualifiedResource:  r.Plural,
		SingularQualifiedResource: r.Singular,
		CreateStrategy:            r.Strategy,
		UpdateStrategy:            r.Strategy,
		DeleteStrategy:            r.Strategy,
		ResetFieldsStrategy:       r.Strategy,
		TableConvertor:            r.Table,
	}
	opts := &generic.StoreOptions{RESTOptions: optsGetter, AttrFunc: r.SelectableFields}
	if err := s.CompleteWithOptions(opts); err != nil {
		return nil, nil, fmt.Errorf("%s: %w", r.Plural, err)
	}
	if r.StatusStrategy == nil {
		return s, nil, nil
	}
	status := *s
	status.UpdateStrategy = r.StatusStrategy
	status.ResetFieldsStrategy = r.StatusStrategy
	return s, &StatusREST{store: &status}, nil
}

// ResetFields returns the same reset field set for every served version of kubevirt.io.
func ResetFields(paths ...fieldpath.Path) map[fieldpath.APIVersion]*fieldpath.Set {
	return resetFieldsOf([]fieldpath.APIVersion{"kubevirt.io/v1", "kubevirt.io/v1alpha3"}, paths...)
}

// resetFieldsOf returns the same reset field set for each of versions.
func resetFieldsOf(versions []fieldpath.APIVersion, paths ...fieldpath.Path) map[fieldpath.APIVersion]*fieldpath.Set {
	set := fieldpath.NewSet(paths...)
	out := make(map[fieldpath.APIVersion]*fieldpath.Set, len(versions))
	for _, v := range versions {
		out[v] = set
	}
	return out
}

// KeepMetadata undoes metadata changes made through /status. Only the controller-owned status
// may change there; labels, annotations, finalizers and owners belong to the main resource.
func KeepMetadata(newMeta, oldMeta *metav1.ObjectMeta) {
	newMeta.Labels = oldMeta.Labels
	newMeta.Annotations = oldMeta.Annotations
	newMeta.Finalizers = oldMeta.Finalizers
	newMeta.OwnerReferences = oldMeta.OwnerReferences
}

// StatusResetFields are the fields a /status write never changes: spec and what KeepMetadata keeps.
func StatusResetFields() map[fieldpath.APIVersion]*fieldpath.Set {
	return ResetFields(statusResetPaths...)
}

// statusResetPaths are the paths of StatusResetFields.
var statusResetPaths = []fieldpath.Path{
	fieldpath.MakePathOrDie("spec"),
	fieldpath.MakePathOrDie("metadata", "labels"),
	fieldpath.MakePathOrDie("metadata", "annotations"),
	fieldpath.MakePathOrDie("metadata", "finalizers"),
	fieldpath.MakePathOrDie("metadata", "ownerReferences"),
}
