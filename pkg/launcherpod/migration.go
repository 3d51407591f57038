package launcherpod

import (
	"errors"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
)

// MigrationTarget says where the target launcher pod of a live migration must (not) go.
type MigrationTarget struct {
	// MigrationUID is the migration's UID, the value of kubevirt.io/migrationJobUID on the pod.
	MigrationUID types.UID
	// SourceNode is the node the guest runs on now; the target pod is kept off it.
	SourceNode string
	// AddedNodeSelector (the migration's spec.addedNodeSelector) further restricts the target
	// nodes. The instance's own selector wins on a shared key: it cannot be loosened.
	AddedNodeSelector map[string]string
}

// RenderMigrationTarget returns the target launcher pod of a live migration: the pod Render
// builds for the instance (same image, resources, volumes and in-pod paths, so that the guest
// finds everything where it left it), plus the migration label and a required node affinity
// that excludes the source node. The VMI controller does not take a pod with the migration label
// for the instance's pod until status.nodeName names its node (the handover).
func RenderMigrationTarget(vmi *kubevirtv1.VirtualMachineInstance, cfg Config, target MigrationTarget) (*corev1.Pod, error) {
	if target.MigrationUID == "" || target.SourceNode == "" {
		return nil, errors.New("a migration target needs the migration's UID and the source node")
	}
	pod, err := Render(vmi, cfg)
	if err != nil {
		return nil, err
	}
	pod.Labels[kubevirtv1.MigrationJobLabel] = string(target.MigrationUID)
	for k, v := range target.AddedNodeSelector {
		if _, own := pod.Spec.NodeSelector[k]; !own {
			pod.Spec.NodeSelector[k] = v
		}
	}
	excludeNode(&pod.Spec, target.SourceNode)
	return pod, nil
}

// excludeNode adds `kubernetes.io/hostname NotIn [node]` to every required node selector term
// (terms are ORed, so each one must exclude the node), or one term holding just that.
func excludeNode(spec *corev1.PodSpec, node string) {
	notOnSource := corev1.NodeSelectorRequirement{
		Key: corev1.LabelHostname, Operator: corev1.NodeSelectorOpNotIn, Values: []string{node},
	}
	if spec.Affinity == nil {
		spec.Affinity = &corev1.Affinity{}
	}
	if spec.Affinity.NodeAffinity == nil {
		spec.Affinity.NodeAffinity = &corev1.NodeAffinity{}
	}
	na := spec.Affinity.NodeAffinity
	if na.RequiredDuringSchedulingIgnoredDuringExecution == nil {
		na.RequiredDuringSchedulingIgnoredDuringExecution = &corev1.NodeSelector{}
	}
	req := na.RequiredDuringSchedulingIgnoredDuringExecution
	if len(req.NodeSelectorTerms) == 0 {
		req.NodeSelectorTerms = []corev1.NodeSelectorTerm{{}}
	}
	for i := range req.NodeSelectorTerms {
		req.NodeSelectorTerms[i].MatchExpressions = append(req.NodeSelectorTerms[i].MatchExpressions, notOnSource)
	}
}

// IsMigrationTarget reports whether pod is the target launcher pod of a migration, and of which.
func IsMigrationTarget(pod *corev1.Pod) (types.UID, bool) {
	uid, ok := pod.Labels[kubevirtv1.MigrationJobLabel]
	return types.UID(uid), ok && uid != ""
}
