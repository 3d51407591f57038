package vm

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/client-go/kubernetes"
	"k8s.io/klog/v2"

	instancetypev1beta1 "github.com/nativevirt/nativevirt/pkg/apis/instancetype/v1beta1"
	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
	"github.com/nativevirt/nativevirt/pkg/client/clientset/versioned"
	"github.com/nativevirt/nativevirt/pkg/instancetype"
	"github.com/nativevirt/nativevirt/pkg/instancetype/revision"
)

// instancetypeAPI is what the controller needs of a VM's instance type and preference: their
// revisions (captured once, as KubeVirt does, so that a later edit of the instance type changes
// no existing VM) and the specs to expand a new instance with.
type instancetypeAPI struct {
	getters revision.Getters
	// createRevision stores a revision in the Kubernetes API.
	createRevision func(ctx context.Context, rev *appsv1.ControllerRevision) (*appsv1.ControllerRevision, error)
}

func newInstancetypeAPI(kube kubernetes.Interface, client versioned.Interface) *instancetypeAPI {
	it := client.InstancetypeV1beta1()
	return &instancetypeAPI{
		getters: revision.Getters{
			Instancetype: func(ctx context.Context, namespace, name string) (*instancetypev1beta1.VirtualMachineInstancetype, error) {
				return it.VirtualMachineInstancetypes(namespace).Get(ctx, name, metav1.GetOptions{})
			},
			ClusterInstancetype: func(ctx context.Context, name string) (*instancetypev1beta1.VirtualMachineClusterInstancetype, error) {
				return it.VirtualMachineClusterInstancetypes().Get(ctx, name, metav1.GetOptions{})
			},
			Preference: func(ctx context.Context, namespace, name string) (*instancetypev1beta1.VirtualMachinePreference, error) {
				return it.VirtualMachinePreferences(namespace).Get(ctx, name, metav1.GetOptions{})
			},
			ClusterPreference: func(ctx context.Context, name string) (*instancetypev1beta1.VirtualMachineClusterPreference, error) {
				return it.VirtualMachineClusterPreferences().Get(ctx, name, metav1.GetOptions{})
			},
			Revision: func(ctx context.Context, namespace, name string) (*appsv1.ControllerRevision, error) {
				return kube.AppsV1().ControllerRevisions(namespace).Get(ctx, name, metav1.GetOptions{})
			},
		},
		createRevision: func(ctx context.Context, rev *appsv1.ControllerRevision) (*appsv1.ControllerRevision, error) {
			return kube.AppsV1().ControllerRevisions(rev.Namespace).Create(ctx, rev, metav1.CreateOptions{})
		},
	}
}

// statusRefs are the VM's status.instancetypeRef and status.preferenceRef.
type statusRefs struct {
	instancetype, preference *kubevirtv1.InstancetypeStatusRef
}

// refs returns the status references the VM should have: for each matcher, the revision the
// status already records for the same object, the matcher's own revisionName, or a revision it
// stores now from the object as it is. A VM without matchers has none. Reading the objects and
// storing a revision happens once per matcher change, never on the syncs in between.
func (a *instancetypeAPI) refs(ctx context.Context, vm *kubevirtv1.VirtualMachine) (statusRefs, error) {
	var out statusRefs
	if m := vm.Spec.Instancetype; m != nil {
		kind, err := revision.InstancetypeKind(m)
		if err != nil {
			return out, err
		}
		out.instancetype, err = a.ref(ctx, vm, m.Name, recordedKind(m.Kind, kind), m.RevisionName, vm.Status.InstancetypeRef, func() (runtime.Object, error) {
			return a.getters.InstancetypeObject(ctx, vm.Namespace, m)
		})
		if err != nil {
			return out, fmt.Errorf("failure to find instancetype: %w", err)
		}
	}
	if m := vm.Spec.Preference; m != nil {
		kind, err := revision.PreferenceKind(m)
		if err != nil {
			return out, err
		}
		out.preference, err = a.ref(ctx, vm, m.Name, recordedKind(m.Kind, kind), m.RevisionName, vm.Status.PreferenceRef, func() (runtime.Object, error) {
			return a.getters.PreferenceObject(ctx, vm.Namespace, m)
		})
		if err != nil {
			return out, fmt.Errorf("failure to find preference: %w", err)
		}
	}
	return out, nil
}

func (a *instancetypeAPI) ref(ctx context.Context, vm *kubevirtv1.VirtualMachine, name, kind, pinned string,
	current *kubevirtv1.InstancetypeStatusRef, get func() (runtime.Object, error)) (*kubevirtv1.InstancetypeStatusRef, error) {
	ref := &kubevirtv1.InstancetypeStatusRef{Name: name, Kind: kind}
	switch {
	case pinned != "":
		ref.ControllerRevisionRef = &kubevirtv1.ControllerRevisionRef{Name: pinned}
	case revision.Matches(current, name, kind):
		ref.ControllerRevisionRef = &kubevirtv1.ControllerRevisionRef{Name: current.ControllerRevisionRef.Name}
	default:
		obj, err := get()
		if err != nil {
			return nil, err
		}
		stored, err := a.store(ctx, vm, obj)
		if err != nil {
			return nil, err
		}
		klog.FromContext(ctx).Info("Stored a revision of the VM's "+kind, "name", name, "revision", stored.Name)
		ref.ControllerRevisionRef = &kubevirtv1.ControllerRevisionRef{Name: stored.Name}
	}
	return ref, nil
}

// store creates the revision of obj, or finds the one an earlier sync created (the name is
// deterministic) and checks that it holds the same object.
func (a *instancetypeAPI) store(ctx context.Context, vm *kubevirtv1.VirtualMachine, obj runtime.Object) (*appsv1.ControllerRevision, error) {
	rev, err := revision.New(vm, obj)
	if err != nil {
		return nil, err
	}
	created, err := a.createRevision(ctx, rev)
	if err == nil {
		return created, nil
	}
	if !apierrors.IsAlreadyExists(err) {
		return nil, fmt.Errorf("storing ControllerRevision %s: %w", rev.Name, err)
	}
	existing, err := a.getters.Revision(ctx, rev.Namespace, rev.Name)
	if err != nil {
		return nil, fmt.Errorf("reading ControllerRevision %s: %w", rev.Name, err)
	}
	if !metav1.IsControlledBy(existing, vm) {
		return nil, fmt.Errorf("ControllerRevision %s exists and belongs to another owner", rev.Name)
	}
	same, err := revision.SameData(rev, existing)
	if err != nil {
		return nil, err
	}
	if !same {
		return nil, fmt.Errorf("ControllerRevision %s exists with other data", rev.Name)
	}
	return existing, nil
}

// recordedKind is the kind a status reference records: the matcher's as written (KubeVirt's
// defaulting writes e.g. virtualmachineclusterinstancetype), or the canonical one for a matcher
// stored without a kind.
func recordedKind(written, canonical string) string {
	if written != "" {
		return written
	}
	return canonical
}

// withRefs is the VM as it is once its status records refs; only the copy's status changes.
func withRefs(vm *kubevirtv1.VirtualMachine, refs statusRefs) *kubevirtv1.VirtualMachine {
	out := *vm
	out.Status.InstancetypeRef = refs.instancetype
	out.Status.PreferenceRef = refs.preference
	return &out
}

// templatePath is where a VM's instance template lies: conflicts are named below it, as the API
// server names them when it refuses such a VM.
var templatePath = field.NewPath("spec", "template")

// expand fills a new instance from the specs the VM's references record: the instance type sets
// resources and CPU, the preference fills what the template leaves unset, and the instance is
// annotated with their names as KubeVirt annotates it. A conflict (the instance type changed
// since the API server accepted the VM, or the VM pins a revision that does not fit) fails the
// create instead of starting a guest other than the one asked for.
func (a *instancetypeAPI) expand(ctx context.Context, vm *kubevirtv1.VirtualMachine, vmi *kubevirtv1.VirtualMachineInstance) error {
	if vm.Spec.Instancetype == nil && vm.Spec.Preference == nil {
		return nil
	}
	it, pref, err := a.getters.Specs(ctx, vm)
	if err != nil {
		return err
	}
	if errs := instancetype.Apply(templatePath, it, pref, &vmi.ObjectMeta, &vmi.Spec); len(errs) > 0 {
		return fmt.Errorf("the instance type or preference does not fit the VM: %w", errs.ToAggregate())
	}
	instancetype.SetAnnotations(vm, &vmi.ObjectMeta)
	return nil
}
