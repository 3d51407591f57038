package store

import (
	"context"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/storage/names"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
)

// Rules are what differs between NativeVirt resources; the strategies built from them share the
// rest. Every resource follows the same split: users write spec and metadata through the main
// resource, controllers write status through /status.
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
}

// strategy is the main resource's strategy for objects of type T.
type strategy[T runtime.Object] struct {
	runtime.ObjectTyper
	names.NameGenerator
	rules Rules[T]
}

// statusStrategy is the /status strategy for objects of type T.
type statusStrategy[T runtime.Object] struct {
	strategy[T]
}

var (
	_ Strategy       = strategy[runtime.Object]{}
	_ StatusStrategy = statusStrategy[runtime.Object]{}
)

// NewStrategies builds the main and /status strategies of a namespaced resource from its rules.
func NewStrategies[T runtime.Object](typer runtime.ObjectTyper, rules Rules[T]) (Strategy, StatusStrategy) {
	s := strategy[T]{ObjectTyper: typer, NameGenerator: names.SimpleNameGenerator, rules: rules}
	return s, statusStrategy[T]{strategy: s}
}

func (strategy[T]) NamespaceScoped() bool { return true }

func (s strategy[T]) PrepareForCreate(_ context.Context, obj runtime.Object) {
	s.rules.PrepareForCreate(obj.(T))
}

func (s strategy[T]) PrepareForUpdate(_ context.Context, obj, old runtime.Object) {
	s.rules.PrepareForUpdate(obj.(T), old.(T))
}

func (s strategy[T]) Validate(_ context.Context, obj runtime.Object) field.ErrorList {
	return s.rules.Validate(obj.(T))
}

func (strategy[T]) WarningsOnCreate(context.Context, runtime.Object) []string { return nil }

func (strategy[T]) Canonicalize(runtime.Object) {}

func (strategy[T]) AllowCreateOnUpdate() bool { return false }

func (strategy[T]) AllowUnconditionalUpdate() bool { return true }

func (s strategy[T]) ValidateUpdate(_ context.Context, obj, old runtime.Object) field.ErrorList {
	return s.rules.ValidateUpdate(obj.(T), old.(T))
}

func (strategy[T]) WarningsOnUpdate(context.Context, runtime.Object, runtime.Object) []string {
	return nil
}

// GetResetFields: writes through the main resource never change status.
func (strategy[T]) GetResetFields() map[fieldpath.APIVersion]*fieldpath.Set {
	return ResetFields(fieldpath.MakePathOrDie("status"))
}

func (s statusStrategy[T]) PrepareForUpdate(_ context.Context, obj, old runtime.Object) {
	s.rules.PrepareForStatusUpdate(obj.(T), old.(T))
}

func (s statusStrategy[T]) ValidateUpdate(_ context.Context, obj, old runtime.Object) field.ErrorList {
	return s.rules.ValidateStatusUpdate(obj.(T), old.(T))
}

// GetResetFields: writes through /status never change spec or the metadata KeepMetadata keeps.
func (statusStrategy[T]) GetResetFields() map[fieldpath.APIVersion]*fieldpath.Set {
	return StatusResetFields()
}
