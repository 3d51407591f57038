package revision

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	instancetypev1beta1 "github.com/nativevirt/nativevirt/pkg/apis/instancetype/v1beta1"
	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
)

// Getters read the objects a VirtualMachine's matchers name. The controller reads through its
// clients, the API server from its own storage; either way each returns the API's errors (a
// NotFound stays one).
type Getters struct {
	Instancetype        func(ctx context.Context, namespace, name string) (*instancetypev1beta1.VirtualMachineInstancetype, error)
	ClusterInstancetype func(ctx context.Context, name string) (*instancetypev1beta1.VirtualMachineClusterInstancetype, error)
	Preference          func(ctx context.Context, namespace, name string) (*instancetypev1beta1.VirtualMachinePreference, error)
	ClusterPreference   func(ctx context.Context, name string) (*instancetypev1beta1.VirtualMachineClusterPreference, error)
	// Revision reads a ControllerRevision; nil where revisions cannot be read (the API server
	// without a Kubernetes client), and then the objects themselves are used.
	Revision func(ctx context.Context, namespace, name string) (*appsv1.ControllerRevision, error)
}

// LookupError says which matcher could not be resolved; Field is spec.instancetype or
// spec.preference.
type LookupError struct {
	Field *field.Path
	Err   error
}

func (e *LookupError) Error() string { return e.Err.Error() }
func (e *LookupError) Unwrap() error { return e.Err }

var (
	instancetypePath = field.NewPath("spec", "instancetype")
	preferencePath   = field.NewPath("spec", "preference")
)

// InstancetypeObject reads the instance type a matcher names in namespace.
func (g Getters) InstancetypeObject(ctx context.Context, namespace string, m *kubevirtv1.InstancetypeMatcher) (runtime.Object, error) {
	kind, err := InstancetypeKind(m)
	if err != nil {
		return nil, &LookupError{Field: instancetypePath.Child("kind"), Err: err}
	}
	var obj runtime.Object
	if kind == instancetypev1beta1.InstancetypeKind {
		obj, err = g.Instancetype(ctx, namespace, m.Name)
	} else {
		obj, err = g.ClusterInstancetype(ctx, m.Name)
	}
	if err != nil {
		return nil, &LookupError{Field: instancetypePath, Err: err}
	}
	return obj, nil
}

// PreferenceObject reads the preference a matcher names in namespace.
func (g Getters) PreferenceObject(ctx context.Context, namespace string, m *kubevirtv1.PreferenceMatcher) (runtime.Object, error) {
	kind, err := PreferenceKind(m)
	if err != nil {
		return nil, &LookupError{Field: preferencePath.Child("kind"), Err: err}
	}
	var obj runtime.Object
	if kind == instancetypev1beta1.PreferenceKind {
		obj, err = g.Preference(ctx, namespace, m.Name)
	} else {
		obj, err = g.ClusterPreference(ctx, m.Name)
	}
	if err != nil {
		return nil, &LookupError{Field: preferencePath, Err: err}
	}
	return obj, nil
}

// Specs returns the instance type and preference specs vm uses (nil for a matcher it does not
// have): those of the revisions its status (or the matcher's revisionName) records for the
// matcher it has now, else those of the objects themselves.
func (g Getters) Specs(ctx context.Context, vm *kubevirtv1.VirtualMachine) (*instancetypev1beta1.VirtualMachineInstancetypeSpec,
	*instancetypev1beta1.VirtualMachinePreferenceSpec, error) {
	var it *instancetypev1beta1.VirtualMachineInstancetypeSpec
	var pref *instancetypev1beta1.VirtualMachinePreferenceSpec
	if m := vm.Spec.Instancetype; m != nil {
		kind, err := InstancetypeKind(m)
		if err != nil {
			return nil, nil, &LookupError{Field: instancetypePath.Child("kind"), Err: err}
		}
		d, err := g.resolve(ctx, vm.Namespace, instancetypePath, m.Name, kind, m.RevisionName, vm.Status.InstancetypeRef,
			func() (runtime.Object, error) { return g.InstancetypeObject(ctx, vm.Namespace, m) })
		if err != nil {
			return nil, nil, err
		}
		if it = d.Instancetype; it == nil {
			return nil, nil, &LookupError{Field: instancetypePath.Child("revisionName"), Err: fmt.Errorf("the revision holds a %s, not an instance type", d.Kind)}
		}
	}
	if m := vm.Spec.Preference; m != nil {
		kind, err := PreferenceKind(m)
		if err != nil {
			return nil, nil, &LookupError{Field: preferencePath.Child("kind"), Err: err}
		}
		d, err := g.resolve(ctx, vm.Namespace, preferencePath, m.Name, kind, m.RevisionName, vm.Status.PreferenceRef,
			func() (runtime.Object, error) { return g.PreferenceObject(ctx, vm.Namespace, m) })
		if err != nil {
			return nil, nil, err
		}
		if pref = d.Preference; pref == nil {
			return nil, nil, &LookupError{Field: preferencePath.Child("revisionName"), Err: fmt.Errorf("the revision holds a %s, not a preference", d.Kind)}
		}
	}
	return it, pref, nil
}

// resolve reads what one matcher (at path) names: the revision recorded for it, when revisions
// can be read, else the object itself (read by object).
func (g Getters) resolve(ctx context.Context, namespace string, path *field.Path, name, kind, pinned string,
	ref *kubevirtv1.InstancetypeStatusRef, object func() (runtime.Object, error)) (*Decoded, error) {
	if rev := revisionName(name, kind, pinned, ref); rev != "" && g.Revision != nil {
		return g.decode(ctx, namespace, rev, path)
	}
	obj, err := object()
	if err != nil {
		return nil, err
	}
	return contents(obj)
}

func (g Getters) decode(ctx context.Context, namespace, name string, path *field.Path) (*Decoded, error) {
	rev, err := g.Revision(ctx, namespace, name)
	if err != nil {
		return nil, &LookupError{Field: path.Child("revisionName"), Err: err}
	}
	d, err := Decode(rev)
	if err != nil {
		return nil, &LookupError{Field: path.Child("revisionName"), Err: err}
	}
	return d, nil
}

// revisionName is the revision recorded for the matcher the VM has now: the matcher's own
// revisionName, or the status reference's revision if the reference names the same object.
func revisionName(name, kind, pinned string, ref *kubevirtv1.InstancetypeStatusRef) string {
	if pinned != "" {
		return pinned
	}
	if Matches(ref, name, kind) {
		return ref.ControllerRevisionRef.Name
	}
	return ""
}
