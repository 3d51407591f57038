package revision

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	instancetypev1beta1 "github.com/nativevirt/nativevirt/pkg/apis/instancetype/v1beta1"
	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
)

// The labels KubeVirt puts on a revision, naming the object it copies.
const (
	ObjectNameLabel       = "instancetype.kubevirt.io/object-name"
	ObjectKindLabel       = "instancetype.kubevirt.io/object-kind"
	ObjectUIDLabel        = "instancetype.kubevirt.io/object-uid"
	ObjectGenerationLabel = "instancetype.kubevirt.io/object-generation"
	ObjectVersionLabel    = "instancetype.kubevirt.io/object-version"
)

// Name is the revision's name, as KubeVirt names it: the VM, the object's name, version, UID and
// generation. The same object at the same generation always gives the same name, so a controller
// that dies between creating the revision and recording it in the VM finds it again.
func Name(vmName string, obj metav1.Object, version string) string {
	return fmt.Sprintf("%s-%s-%s-%s-%d", vmName, obj.GetName(), version, obj.GetUID(), obj.GetGeneration())
}

// New builds the revision of obj (one of the four kinds of instancetype.kubevirt.io/v1beta1) for
// vm: the object without the metadata that does not describe it (labels, annotations,
// finalizers, owners, managed fields), owned by the VM so that it goes with it.
func New(vm *kubevirtv1.VirtualMachine, obj runtime.Object) (*appsv1.ControllerRevision, error) {
	held, err := contents(obj)
	if err != nil {
		return nil, err
	}
	kind := held.Kind
	obj = obj.DeepCopyObject()
	meta, ok := obj.(metav1.Object)
	if !ok {
		return nil, fmt.Errorf("%T has no object metadata", obj)
	}
	version := instancetypev1beta1.SchemeGroupVersion.Version
	name := Name(vm.Name, meta, version)
	meta.SetLabels(nil)
	meta.SetAnnotations(nil)
	meta.SetFinalizers(nil)
	meta.SetOwnerReferences(nil)
	meta.SetManagedFields(nil)
	obj.GetObjectKind().SetGroupVersionKind(instancetypev1beta1.SchemeGroupVersion.WithKind(kind))
	data, err := json.Marshal(obj)
	if err != nil {
		return nil, fmt.Errorf("encoding %s %s: %w", kind, meta.GetName(), err)
	}
	return &appsv1.ControllerRevision{
		ObjectMeta: metav1.ObjectMeta{
			Name:            name,
			Namespace:       vm.Namespace,
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(vm, kubevirtv1.SchemeGroupVersion.WithKind("VirtualMachine"))},
			Labels: map[string]string{
				ObjectNameLabel:       meta.GetName(),
				ObjectKindLabel:       kind,
				ObjectUIDLabel:        string(meta.GetUID()),
				ObjectGenerationLabel: strconv.FormatInt(meta.GetGeneration(), 10),
				ObjectVersionLabel:    version,
			},
		},
		Data: runtime.RawExtension{Raw: data},
	}, nil
}

// SameData reports whether two revisions hold the same object. A revision found under the name
// New gives must hold what New would write; anything else is not ours to use.
func SameData(a, b *appsv1.ControllerRevision) (bool, error) {
	ra, err := rawData(a)
	if err != nil {
		return false, err
	}
	rb, err := rawData(b)
	if err != nil {
		return false, err
	}
	var va, vb any
	if err := json.Unmarshal(ra, &va); err != nil {
		return false, err
	}
	if err := json.Unmarshal(rb, &vb); err != nil {
		return false, err
	}
	ca, _ := json.Marshal(va)
	cb, _ := json.Marshal(vb)
	return bytes.Equal(ca, cb), nil
}

// Decoded is what a revision, or an instance type or preference itself, holds.
type Decoded struct {
	// Kind is one of the four kinds of instancetype.kubevirt.io.
	Kind string
	// Instancetype is set for the instance type kinds, Preference for the preference kinds.
	Instancetype *instancetypev1beta1.VirtualMachineInstancetypeSpec
	Preference   *instancetypev1beta1.VirtualMachinePreferenceSpec
}

// Decode reads the object of a revision. Only instancetype.kubevirt.io/v1beta1 is understood
// (NativeVirt never served the older versions, so it never wrote revisions of them).
func Decode(rev *appsv1.ControllerRevision) (*Decoded, error) {
	raw, err := rawData(rev)
	if err != nil {
		return nil, err
	}
	var tm metav1.TypeMeta
	if err := json.Unmarshal(raw, &tm); err != nil {
		return nil, fmt.Errorf("revision %s: %w", rev.Name, err)
	}
	if tm.APIVersion != instancetypev1beta1.SchemeGroupVersion.String() {
		return nil, fmt.Errorf("revision %s holds %s %s: only %s is supported", rev.Name, tm.APIVersion, tm.Kind,
			instancetypev1beta1.SchemeGroupVersion)
	}
	d := &Decoded{Kind: tm.Kind}
	switch tm.Kind {
	case instancetypev1beta1.InstancetypeKind, instancetypev1beta1.ClusterInstancetypeKind:
		var obj struct {
			Spec instancetypev1beta1.VirtualMachineInstancetypeSpec `json:"spec"`
		}
		err = json.Unmarshal(raw, &obj)
		d.Instancetype = &obj.Spec
	case instancetypev1beta1.PreferenceKind, instancetypev1beta1.ClusterPreferenceKind:
		var obj struct {
			Spec instancetypev1beta1.VirtualMachinePreferenceSpec `json:"spec"`
		}
		err = json.Unmarshal(raw, &obj)
		d.Preference = &obj.Spec
	default:
		return nil, fmt.Errorf("revision %s holds an unknown kind %q", rev.Name, tm.Kind)
	}
	if err != nil {
		return nil, fmt.Errorf("revision %s: %w", rev.Name, err)
	}
	return d, nil
}

func rawData(rev *appsv1.ControllerRevision) ([]byte, error) {
	if len(rev.Data.Raw) > 0 {
		return rev.Data.Raw, nil
	}
	if rev.Data.Object != nil {
		return json.Marshal(rev.Data.Object)
	}
	return nil, fmt.Errorf("revision %s holds no data", rev.Name)
}

// contents is what obj, one of the four kinds of instancetype.kubevirt.io/v1beta1, holds.
func contents(obj runtime.Object) (*Decoded, error) {
	switch o := obj.(type) {
	case *instancetypev1beta1.VirtualMachineInstancetype:
		return &Decoded{Kind: instancetypev1beta1.InstancetypeKind, Instancetype: &o.Spec}, nil
	case *instancetypev1beta1.VirtualMachineClusterInstancetype:
		return &Decoded{Kind: instancetypev1beta1.ClusterInstancetypeKind, Instancetype: &o.Spec}, nil
	case *instancetypev1beta1.VirtualMachinePreference:
		return &Decoded{Kind: instancetypev1beta1.PreferenceKind, Preference: &o.Spec}, nil
	case *instancetypev1beta1.VirtualMachineClusterPreference:
		return &Decoded{Kind: instancetypev1beta1.ClusterPreferenceKind, Preference: &o.Spec}, nil
	}
	return nil, fmt.Errorf("not an instance type or preference: %T", obj)
}
