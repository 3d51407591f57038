package store

import (
	"context"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/storage/names"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
)

// Rules are what differs between NativeVirt resources; the strategies built from them share the
// rest. A resource with status follows the same split: users write spec and metadata through the
// main resource, controllers write status through /status (NewStrategies). A resource without
// status (instance types, preferences) has the main strategy only (NewStrategy) and leaves the
// status rules nil.
type Rules[T runtime.Object] struct {
	// PrepareForCreate clears status and sets request-time defaults.
	PrepareForCreate func(obj T)
	// PrepareForUpdate restores status from oldObj and bumps the generation on spec changes.
	PrepareForUpdate func(newObj, oldObj T)
	// PrepareForStatusUpdate restores spec (and KeepMetadata's fields) from oldObj.
	PrepareForStatusUpdate func(newObj, oldObj T)
	// Validate, ValidateUpdate and ValidateStatusUpdate are pure validation functions.
	Validate             func(obj T) field.ErrorList
	ValidateUpdate       func(newObj, oldObj T) field.ErrorList
	ValidateStatusUpdate func(newObj, oldObj T) field.ErrorList
	// Warnings, if set, tells the client about accepted but deprecated values of a created or
	// updated object.
	Warnings func(obj T) []string
}

// Scope says where a resource's objects live.
type Scope bool

// The scopes of a resource.
const (
	Namespaced    Scope = true
	ClusterScoped Scope = false
)

// strategy is the main resource's strategy for objects of type T.
type strategy[T runtime.Object] struct {
	runtime.ObjectTyper
	names.NameGenerator
	rules      Rules[T]
	namespaced bool
	// resetFields are the fields writes through the main resource never change.
	resetFields map[fieldpath.APIVersion]*fieldpath.Set
	// statusResetFields are the fields writes through /status never change.
	statusResetFields map[fieldpath.APIVersion]*fieldpath.Set
}

// statusStrategy is the /status strategy for objects of type T.
type statusStrategy[T runtime.Object] struct {
	strategy[T]
}

var (
	_ Strategy       = strategy[runtime.Object]{}
	_ StatusStrategy = statusStrategy[runtime.Object]{}
)

// NewStrategies builds the main and /status strategies of a namespaced kubevirt.io resource from
// its rules.
func NewStrategies[T runtime.Object](typer runtime.ObjectTyper, rules Rules[T]) (Strategy, StatusStrategy) {
	s := strategy[T]{ObjectTyper: typer, NameGenerator: names.SimpleNameGenerator, rules: rules, namespaced: true,
		resetFields: ResetFields(fieldpath.MakePathOrDie("status")), statusResetFields: StatusResetFields()}
	return s, statusStrategy[T]{strategy: s}
}

// NewGroupStrategies builds the main and /status strategies of a resource with status in any
// group and scope. versions are the served API versions (e.g. "cdi.kubevirt.io/v1beta1") that
// server-side apply's reset fields are keyed by.
func NewGroupStrategies[T runtime.Object](typer runtime.ObjectTyper, scope Scope, versions []fieldpath.APIVersion, rules Rules[T]) (Strategy, StatusStrategy) {
	s := strategy[T]{ObjectTyper: typer, NameGenerator: names.SimpleNameGenerator, rules: rules, namespaced: bool(scope),
		resetFields:       resetFieldsOf(versions, fieldpath.MakePathOrDie("status")),
		statusResetFields: resetFieldsOf(versions, statusResetPaths...)}
	return s, statusStrategy[T]{strategy: s}
}

// NewStrategy builds the strategy of a resource without status: every field is the user's, so
// server-side apply resets none. The rules' status functions are not used.
func NewStrategy[T runtime.Object](typer runtime.ObjectTyper, scope Scope, rules Rules[T]) Strategy {
	return strategy[T]{ObjectTyper: typer, NameGenerator: names.SimpleNameGenerator, rules: rules, namespaced: bool(scope)}
}

func (s strategy[T]) NamespaceScoped() bool { return s.namespaced }

func (s strategy[T]) PrepareForCreate(_ context.Context, obj runtime.Object) {
	s.rules.PrepareForCreate(obj.(T))
}

func (s strategy[T]) PrepareForUpdate(_ context.Context, obj, old runtime.Object) {
	s.rules.PrepareForUpdate(obj.(T), old.(T))
}

func (s strategy[T]) Validate(_ context.Context, obj runtime.Object) field.ErrorList {
	return s.rules.Validate(obj.(T))
}

func (s strategy[T]) WarningsOnCreate(_ context.Context, obj runtime.Object) []string {
	return s.warnings(obj)
}

func (strategy[T]) Canonicalize(runtime.Object) {}

func (strategy[T]) AllowCreateOnUpdate() bool { return false }

func (strategy[T]) AllowUnconditionalUpdate() bool { return true }

func (s strategy[T]) ValidateUpdate(_ context.Context, obj, old runtime.Object) field.ErrorList {
	return s.rules.ValidateUpdate(obj.(T), old.(T))
}

func (s strategy[T]) WarningsOnUpdate(_ context.Context, obj, _ runtime.Object) []string {
	return s.warnings(obj)
}

func (s strategy[T]) warnings(obj runtime.Object) []string {
	if s.rules.Warnings == nil {
		return nil
	}
	return s.rules.Warnings(obj.(T))
}

// GetResetFields: writes through the main resource never change status (when there is one).
func (s strategy[T]) GetResetFields() map[fieldpath.APIVersion]*fieldpath.Set {
	return s.resetFields
}

func (s statusStrategy[T]) PrepareForUpdate(_ context.Context, obj, old runtime.Object) {
	s.rules.PrepareForStatusUpdate(obj.(T), old.(T))
}

func (s statusStrategy[T]) ValidateUpdate(_ context.Context, obj, old runtime.Object) field.ErrorList {
	return s.rules.ValidateStatusUpdate(obj.(T), old.(T))
}

// GetResetFields: writes through /status never change spec or the metadata KeepMetadata keeps.
func (s statusStrategy[T]) GetResetFields() map[fieldpath.APIVersion]*fieldpath.Set {
	return s.statusResetFields
}
