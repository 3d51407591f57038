package validation

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
)

func validRS() *kubevirtv1.VirtualMachineInstanceReplicaSet {
	return &kubevirtv1.VirtualMachineInstanceReplicaSet{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default"},
		Spec: kubevirtv1.VirtualMachineInstanceReplicaSetSpec{
			Replicas: ptr(int32(2)),
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
			Template: &kubevirtv1.VirtualMachineInstanceTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web", "tier": "front"}},
				Spec:       *validSpec(),
			},
		},
	}
}

func TestValidateVirtualMachineInstanceReplicaSet(t *testing.T) {
	cases := []struct {
		name   string
		mutate func(rs *kubevirtv1.VirtualMachineInstanceReplicaSet)
		want   []string
	}{
		{"valid", func(*kubevirtv1.VirtualMachineInstanceReplicaSet) {}, nil},
		{"name with a dot (instance names would not be labels)", func(rs *kubevirtv1.VirtualMachineInstanceReplicaSet) {
			rs.Name = "web.v2"
		}, []string{"Invalid:metadata.name"}},
		{"zero replicas", func(rs *kubevirtv1.VirtualMachineInstanceReplicaSet) { rs.Spec.Replicas = ptr(int32(0)) }, nil},
		{"replicas unset", func(rs *kubevirtv1.VirtualMachineInstanceReplicaSet) { rs.Spec.Replicas = nil }, nil},
		{"negative replicas", func(rs *kubevirtv1.VirtualMachineInstanceReplicaSet) { rs.Spec.Replicas = ptr(int32(-1)) },
			[]string{"Invalid:spec.replicas"}},
		{"selector by expression", func(rs *kubevirtv1.VirtualMachineInstanceReplicaSet) {
			rs.Spec.Selector = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
				{Key: "tier", Operator: metav1.LabelSelectorOpIn, Values: []string{"front", "back"}}}}
		}, nil},
		{"no selector", func(rs *kubevirtv1.VirtualMachineInstanceReplicaSet) { rs.Spec.Selector = nil },
			[]string{"Required:spec.selector"}},
		{"empty selector", func(rs *kubevirtv1.VirtualMachineInstanceReplicaSet) { rs.Spec.Selector = &metav1.LabelSelector{} },
			[]string{"Invalid:spec.selector"}},
		{"malformed selector", func(rs *kubevirtv1.VirtualMachineInstanceReplicaSet) {
			rs.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"app": "not valid!"}}
		}, []string{"Invalid:spec.selector.matchLabels"}},
		{"selector operator without values", func(rs *kubevirtv1.VirtualMachineInstanceReplicaSet) {
			rs.Spec.Selector = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
				{Key: "tier", Operator: metav1.LabelSelectorOpIn}}}
		}, []string{"Required:spec.selector.matchExpressions[0].values"}},
		{"selector does not match", func(rs *kubevirtv1.VirtualMachineInstanceReplicaSet) {
			rs.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"app": "db"}}
		}, []string{"Invalid:spec.template.metadata.labels"}},
		{"template without labels", func(rs *kubevirtv1.VirtualMachineInstanceReplicaSet) {
			rs.Spec.Template.ObjectMeta.Labels = nil
		}, []string{"Invalid:spec.template.metadata.labels"}},
		{"no template", func(rs *kubevirtv1.VirtualMachineInstanceReplicaSet) { rs.Spec.Template = nil },
			[]string{"Required:spec.template"}},
		{"bad template spec", func(rs *kubevirtv1.VirtualMachineInstanceReplicaSet) {
			rs.Spec.Template.Spec.Domain.Resources.Requests = corev1.ResourceList{}
			rs.Spec.Template.Spec.Domain.Devices.Disks[0].Disk.Bus = "ide"
		}, []string{"Required:spec.template.spec.domain.resources.requests[memory]",
			"NotSupported:spec.template.spec.domain.devices.disks[0].disk.bus"}},
		{"sidecar hooks in the template", func(rs *kubevirtv1.VirtualMachineInstanceReplicaSet) {
			rs.Spec.Template.ObjectMeta.Annotations = map[string]string{SidecarHooksAnnotation: "[]"}
		}, []string{"Forbidden:spec.template.metadata.annotations[hooks.kubevirt.io/hookSidecars]"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rs := validRS()
			tc.mutate(rs)
			compareErrs(t, tc.want, ValidateVirtualMachineInstanceReplicaSet(rs))
			compareErrs(t, tc.want, ValidateVirtualMachineInstanceReplicaSetUpdate(rs, validRS()))
		})
	}
}

func TestValidateVirtualMachineInstanceReplicaSetStatusUpdate(t *testing.T) {
	cases := []struct {
		name   string
		status kubevirtv1.VirtualMachineInstanceReplicaSetStatus
		want   []string
	}{
		{"empty", kubevirtv1.VirtualMachineInstanceReplicaSetStatus{}, nil},
		{"two of three ready", kubevirtv1.VirtualMachineInstanceReplicaSetStatus{Replicas: 3, ReadyReplicas: 2, LabelSelector: "app=web"}, nil},
		{"all ready", kubevirtv1.VirtualMachineInstanceReplicaSetStatus{Replicas: 3, ReadyReplicas: 3}, nil},
		{"negative replicas", kubevirtv1.VirtualMachineInstanceReplicaSetStatus{Replicas: -1},
			[]string{"Invalid:status.replicas"}},
		{"negative ready", kubevirtv1.VirtualMachineInstanceReplicaSetStatus{Replicas: 1, ReadyReplicas: -1},
			[]string{"Invalid:status.readyReplicas"}},
		{"more ready than replicas", kubevirtv1.VirtualMachineInstanceReplicaSetStatus{Replicas: 1, ReadyReplicas: 2},
			[]string{"Invalid:status.readyReplicas"}},
		{"condition without type", kubevirtv1.VirtualMachineInstanceReplicaSetStatus{
			Conditions: []kubevirtv1.VirtualMachineInstanceReplicaSetCondition{{Status: "True"}}},
			[]string{"Required:status.conditions[0].type"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rs := validRS()
			rs.Status = tc.status
			compareErrs(t, tc.want, ValidateVirtualMachineInstanceReplicaSetStatusUpdate(rs, validRS()))
		})
	}
}
