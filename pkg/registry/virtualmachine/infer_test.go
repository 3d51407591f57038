package virtualmachine

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
)

// claims holds "labelled" (naming u1.small as a namespaced instance type and the cluster
// preference fedora) and "plain" (no labels) in ns.
func claims(fail error) ClaimGetter {
	return func(_ context.Context, namespace, name string) (*corev1.PersistentVolumeClaim, error) {
		if fail != nil {
			return nil, fail
		}
		c := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace}}
		switch {
		case namespace == "ns" && name == "labelled":
			c.Labels = map[string]string{DefaultInstancetypeLabel: "u1.small", DefaultInstancetypeKindLabel: "VirtualMachineInstancetype",
				DefaultPreferenceLabel: "fedora"}
		case namespace == "ns" && name == "plain":
		default:
			return nil, apierrors.NewNotFound(corev1.Resource("persistentvolumeclaims"), name)
		}
		return c, nil
	}
}

// inferVM has the volumes root (claim labelled), data (claim plain), scratch (an emptyDisk) and
// missing (a claim that does not exist), and memory of its own.
func inferVM() *kubevirtv1.VirtualMachine {
	claim := func(name string) kubevirtv1.VolumeSource {
		return kubevirtv1.VolumeSource{PersistentVolumeClaim: &kubevirtv1.PersistentVolumeClaimVolumeSource{
			PersistentVolumeClaimVolumeSource: corev1.PersistentVolumeClaimVolumeSource{ClaimName: name}}}
	}
	guest := resource.MustParse("1Gi")
	return &kubevirtv1.VirtualMachine{
		ObjectMeta: metav1.ObjectMeta{Name: "vm1", Namespace: "ns"},
		Spec: kubevirtv1.VirtualMachineSpec{Template: &kubevirtv1.VirtualMachineInstanceTemplateSpec{Spec: kubevirtv1.VirtualMachineInstanceSpec{
			Domain: kubevirtv1.DomainSpec{Memory: &kubevirtv1.Memory{Guest: &guest}},
			Volumes: []kubevirtv1.Volume{
				{Name: "root", VolumeSource: claim("labelled")},
				{Name: "data", VolumeSource: claim("plain")},
				{Name: "scratch", VolumeSource: kubevirtv1.VolumeSource{EmptyDisk: &kubevirtv1.EmptyDiskSource{}}},
				{Name: "missing", VolumeSource: claim("gone")},
			},
		}}},
	}
}

func TestInferMatchers(t *testing.T) {
	ignore := kubevirtv1.IgnoreInferFromVolumeFailure
	cases := []struct {
		name       string
		it         *kubevirtv1.InstancetypeMatcher
		pref       *kubevirtv1.PreferenceMatcher
		wantIt     *kubevirtv1.InstancetypeMatcher
		wantPref   *kubevirtv1.PreferenceMatcher
		wantMemory bool
		wantErrs   []string
	}{
		{name: "from the claim's labels",
			it:     &kubevirtv1.InstancetypeMatcher{InferFromVolume: "root"},
			pref:   &kubevirtv1.PreferenceMatcher{InferFromVolume: "root"},
			wantIt: &kubevirtv1.InstancetypeMatcher{Name: "u1.small", Kind: "VirtualMachineInstancetype"}, wantPref: &kubevirtv1.PreferenceMatcher{Name: "fedora"},
			wantMemory: true},
		{name: "found with policy Ignore drops the fallback memory",
			it:     &kubevirtv1.InstancetypeMatcher{InferFromVolume: "root", InferFromVolumeFailurePolicy: &ignore},
			wantIt: &kubevirtv1.InstancetypeMatcher{Name: "u1.small", Kind: "VirtualMachineInstancetype"}},
		{name: "no label: refused",
			it:       &kubevirtv1.InstancetypeMatcher{InferFromVolume: "data"},
			wantIt:   &kubevirtv1.InstancetypeMatcher{InferFromVolume: "data"},
			wantErrs: []string{"spec.instancetype.inferFromVolume"}, wantMemory: true},
		{name: "no label, policy Ignore: the matchers go, the memory stays",
			it:         &kubevirtv1.InstancetypeMatcher{InferFromVolume: "data", InferFromVolumeFailurePolicy: &ignore},
			pref:       &kubevirtv1.PreferenceMatcher{InferFromVolume: "scratch", InferFromVolumeFailurePolicy: &ignore},
			wantMemory: true},
		{name: "a volume of another kind: refused",
			pref:     &kubevirtv1.PreferenceMatcher{InferFromVolume: "scratch"},
			wantPref: &kubevirtv1.PreferenceMatcher{InferFromVolume: "scratch"},
			wantErrs: []string{"spec.preference.inferFromVolume"}, wantMemory: true},
		{name: "no such volume or claim: refused even with Ignore",
			it:       &kubevirtv1.InstancetypeMatcher{InferFromVolume: "nosuch", InferFromVolumeFailurePolicy: &ignore},
			pref:     &kubevirtv1.PreferenceMatcher{InferFromVolume: "missing", InferFromVolumeFailurePolicy: &ignore},
			wantIt:   &kubevirtv1.InstancetypeMatcher{InferFromVolume: "nosuch", InferFromVolumeFailurePolicy: &ignore},
			wantPref: &kubevirtv1.PreferenceMatcher{InferFromVolume: "missing", InferFromVolumeFailurePolicy: &ignore},
			wantErrs: []string{"spec.instancetype.inferFromVolume", "spec.preference.inferFromVolume"}, wantMemory: true},
		{name: "a named matcher is left alone",
			it:     &kubevirtv1.InstancetypeMatcher{Name: "u1.large"},
			wantIt: &kubevirtv1.InstancetypeMatcher{Name: "u1.large"}, wantMemory: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			vm := inferVM()
			vm.Spec.Instancetype, vm.Spec.Preference = tc.it, tc.pref
			errs, err := inferMatchers(context.Background(), claims(nil), vm)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, e := range errs {
				got = append(got, e.Field)
			}
			if diff := cmp.Diff(tc.wantErrs, got); diff != "" {
				t.Errorf("errors (-want +got):\n%s\n%v", diff, errs)
			}
			if diff := cmp.Diff(tc.wantIt, vm.Spec.Instancetype); diff != "" {
				t.Errorf("instancetype (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantPref, vm.Spec.Preference); diff != "" {
				t.Errorf("preference (-want +got):\n%s", diff)
			}
			if hasMemory := vm.Spec.Template.Spec.Domain.Memory != nil; hasMemory != tc.wantMemory {
				t.Errorf("template memory kept: %v, want %v", hasMemory, tc.wantMemory)
			}
		})
	}
}

func TestInferMatchersReadFailure(t *testing.T) {
	vm := inferVM()
	vm.Spec.Instancetype = &kubevirtv1.InstancetypeMatcher{InferFromVolume: "root"}
	boom := apierrors.NewForbidden(corev1.Resource("persistentvolumeclaims"), "labelled", errors.New("no"))
	if errs, err := inferMatchers(context.Background(), claims(boom), vm); err == nil || errs != nil {
		t.Errorf("a failed read: %v, %v; want the error, not a field error", errs, err)
	}
}
