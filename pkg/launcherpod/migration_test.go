package launcherpod

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
)

func notIn(node string) corev1.NodeSelectorRequirement {
	return corev1.NodeSelectorRequirement{Key: corev1.LabelHostname, Operator: corev1.NodeSelectorOpNotIn, Values: []string{node}}
}

func TestRenderMigrationTarget(t *testing.T) {
	zoneA := corev1.NodeSelectorRequirement{Key: "zone", Operator: corev1.NodeSelectorOpIn, Values: []string{"a"}}
	zoneB := corev1.NodeSelectorRequirement{Key: "zone", Operator: corev1.NodeSelectorOpIn, Values: []string{"b"}}
	tests := []struct {
		name         string
		affinity     *corev1.Affinity
		added        map[string]string
		wantTerms    []corev1.NodeSelectorTerm
		wantSelector map[string]string
	}{
		{
			name:         "no affinity of its own",
			wantTerms:    []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{notIn("node-a")}}},
			wantSelector: map[string]string{"kubernetes.io/os": "linux", "kubevirt.io/schedulable": "true"},
		},
		{
			name: "every ORed term excludes the source",
			affinity: &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
				NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{zoneA}},
					{MatchExpressions: []corev1.NodeSelectorRequirement{zoneB}}}}}},
			wantTerms: []corev1.NodeSelectorTerm{
				{MatchExpressions: []corev1.NodeSelectorRequirement{zoneA, notIn("node-a")}},
				{MatchExpressions: []corev1.NodeSelectorRequirement{zoneB, notIn("node-a")}}},
			wantSelector: map[string]string{"kubernetes.io/os": "linux", "kubevirt.io/schedulable": "true"},
		},
		{
			name:         "pod affinity only",
			affinity:     &corev1.Affinity{PodAffinity: &corev1.PodAffinity{}},
			wantTerms:    []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{notIn("node-a")}}},
			wantSelector: map[string]string{"kubernetes.io/os": "linux", "kubevirt.io/schedulable": "true"},
		},
		{
			name:         "added node selector cannot loosen the instance's",
			added:        map[string]string{"rack": "r1", "kubernetes.io/os": "windows", "kubevirt.io/schedulable": "false"},
			wantTerms:    []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{notIn("node-a")}}},
			wantSelector: map[string]string{"kubernetes.io/os": "linux", "kubevirt.io/schedulable": "true", "rack": "r1"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			vmi := testVMI()
			vmi.Spec.Affinity = tc.affinity
			vmi.Labels[kubevirtv1.MigrationTargetNodeNameLabel] = "node-b"
			source, err := Render(vmi, Config{UseEmulation: true})
			if err != nil {
				t.Fatal(err)
			}
			pod, err := RenderMigrationTarget(vmi, Config{UseEmulation: true},
				MigrationTarget{MigrationUID: "mig-uid", SourceNode: "node-a", AddedNodeSelector: tc.added})
			if err != nil {
				t.Fatal(err)
			}
			if uid, ok := IsMigrationTarget(pod); !ok || uid != "mig-uid" {
				t.Errorf("IsMigrationTarget = %q, %v", uid, ok)
			}
			if _, ok := IsMigrationTarget(source); ok {
				t.Error("the source pod counts as a migration target")
			}
			if diff := cmp.Diff(tc.wantTerms, pod.Spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms); diff != "" {
				t.Errorf("node selector terms (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantSelector, pod.Spec.NodeSelector); diff != "" {
				t.Errorf("node selector (-want +got):\n%s", diff)
			}
			// Everything else is the source pod: same image, resources, volumes, paths.
			wantLabels := map[string]string{}
			for k, v := range source.Labels {
				wantLabels[k] = v
			}
			wantLabels[kubevirtv1.MigrationJobLabel] = "mig-uid"
			if diff := cmp.Diff(wantLabels, pod.Labels); diff != "" {
				t.Errorf("labels (-want +got):\n%s", diff)
			}
			if _, ok := pod.Labels[kubevirtv1.MigrationTargetNodeNameLabel]; ok {
				t.Error("the instance's migration target label was copied to the pod")
			}
			pod.Labels, source.Labels = nil, nil
			pod.Spec.Affinity, source.Spec.Affinity = nil, nil
			pod.Spec.NodeSelector, source.Spec.NodeSelector = nil, nil
			if diff := cmp.Diff(source, pod); diff != "" {
				t.Errorf("target pod differs from the source pod beyond placement (-source +target):\n%s", diff)
			}
			// The instance's own affinity is not modified.
			if tc.affinity != nil && tc.affinity.NodeAffinity != nil &&
				len(vmi.Spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms[0].MatchExpressions) != 1 {
				t.Error("RenderMigrationTarget changed the instance's affinity")
			}
		})
	}
}

func TestRenderMigrationTargetErrors(t *testing.T) {
	for _, target := range []MigrationTarget{{SourceNode: "node-a"}, {MigrationUID: "mig-uid"}} {
		if _, err := RenderMigrationTarget(testVMI(), Config{}, target); err == nil {
			t.Errorf("RenderMigrationTarget(%+v) succeeded", target)
		}
	}
}
