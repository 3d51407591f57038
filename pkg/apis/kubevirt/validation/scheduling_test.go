package validation

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
)

func TestValidateNodeSelectorAndDNS(t *testing.T) {
	runSpecCases(t, []specCase{
		{"node selector", func(s *kubevirtv1.VirtualMachineInstanceSpec) {
			s.NodeSelector = map[string]string{"kubernetes.io/hostname": "node-1", "kubevirt.io/schedulable": "true"}
		}, nil},
		{"bad node selector key", func(s *kubevirtv1.VirtualMachineInstanceSpec) {
			s.NodeSelector = map[string]string{"bad key!": "x"}
		}, []string{"Invalid:spec.nodeSelector"}},
		{"bad node selector value", func(s *kubevirtv1.VirtualMachineInstanceSpec) {
			s.NodeSelector = map[string]string{"zone": "a b"}
		}, []string{"Invalid:spec.nodeSelector"}},
		{"priority class", func(s *kubevirtv1.VirtualMachineInstanceSpec) { s.PriorityClassName = "high-priority" }, nil},
		{"bad priority class", func(s *kubevirtv1.VirtualMachineInstanceSpec) { s.PriorityClassName = "High_Priority" },
			[]string{"Invalid:spec.priorityClassName"}},
		{"dns policy", func(s *kubevirtv1.VirtualMachineInstanceSpec) { s.DNSPolicy = corev1.DNSClusterFirst }, nil},
		{"dns policy None with config", func(s *kubevirtv1.VirtualMachineInstanceSpec) {
			s.DNSPolicy = corev1.DNSNone
			s.DNSConfig = &corev1.PodDNSConfig{Nameservers: []string{"1.1.1.1"}}
		}, nil},
		{"dns policy None without config", func(s *kubevirtv1.VirtualMachineInstanceSpec) { s.DNSPolicy = corev1.DNSNone },
			[]string{"Required:spec.dnsConfig"}},
		{"unknown dns policy", func(s *kubevirtv1.VirtualMachineInstanceSpec) { s.DNSPolicy = "Everything" },
			[]string{"NotSupported:spec.dnsPolicy"}},
	})
}

func TestValidateTolerations(t *testing.T) {
	tol := func(ts ...corev1.Toleration) func(s *kubevirtv1.VirtualMachineInstanceSpec) {
		return func(s *kubevirtv1.VirtualMachineInstanceSpec) { s.Tolerations = ts }
	}
	runSpecCases(t, []specCase{
		{"good tolerations", tol(
			corev1.Toleration{Key: "node-role.kubernetes.io/control-plane", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule},
			corev1.Toleration{Key: "dedicated", Operator: corev1.TolerationOpEqual, Value: "vms"},
			corev1.Toleration{Key: "node.kubernetes.io/unreachable", Effect: corev1.TaintEffectNoExecute, TolerationSeconds: ptr(int64(30))},
			corev1.Toleration{Operator: corev1.TolerationOpExists},
		), nil},
		{"exists with a value", tol(corev1.Toleration{Key: "k", Operator: corev1.TolerationOpExists, Value: "v"}),
			[]string{"Invalid:spec.tolerations[0].value"}},
		{"equal without key", tol(corev1.Toleration{Operator: corev1.TolerationOpEqual, Value: "v"}),
			[]string{"Invalid:spec.tolerations[0].operator"}},
		{"bad key", tol(corev1.Toleration{Key: "-bad-", Operator: corev1.TolerationOpExists}),
			[]string{"Invalid:spec.tolerations[0].key"}},
		{"bad value", tol(corev1.Toleration{Key: "k", Value: "not valid!"}), []string{"Invalid:spec.tolerations[0].value"}},
		{"unknown operator", tol(corev1.Toleration{Key: "k", Operator: "Matches"}), []string{"NotSupported:spec.tolerations[0].operator"}},
		{"unknown effect", tol(corev1.Toleration{Key: "k", Operator: corev1.TolerationOpExists, Effect: "NoEntry"}),
			[]string{"NotSupported:spec.tolerations[0].effect"}},
		{"seconds without NoExecute", tol(corev1.Toleration{Key: "k", Operator: corev1.TolerationOpExists,
			Effect: corev1.TaintEffectNoSchedule, TolerationSeconds: ptr(int64(5))}),
			[]string{"Invalid:spec.tolerations[0].tolerationSeconds"}},
	})
}

func TestValidateAffinity(t *testing.T) {
	const na = "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms"
	required := func(terms ...corev1.NodeSelectorTerm) func(s *kubevirtv1.VirtualMachineInstanceSpec) {
		return func(s *kubevirtv1.VirtualMachineInstanceSpec) {
			s.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{
				RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{NodeSelectorTerms: terms}}}
		}
	}
	expr := func(key string, op corev1.NodeSelectorOperator, values ...string) corev1.NodeSelectorTerm {
		return corev1.NodeSelectorTerm{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: key, Operator: op, Values: values}}}
	}
	podTerm := corev1.PodAffinityTerm{
		LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "db"}},
		TopologyKey:   "kubernetes.io/hostname",
	}
	runSpecCases(t, []specCase{
		{"full affinity", func(s *kubevirtv1.VirtualMachineInstanceSpec) {
			s.Affinity = &corev1.Affinity{
				NodeAffinity: &corev1.NodeAffinity{
					RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{
						expr("zone", corev1.NodeSelectorOpIn, "a", "b"),
						expr("gpu", corev1.NodeSelectorOpDoesNotExist),
						expr("cpus", corev1.NodeSelectorOpGt, "4"),
						{MatchFields: []corev1.NodeSelectorRequirement{{Key: "metadata.name", Operator: corev1.NodeSelectorOpIn, Values: []string{"n1"}}}},
					}},
					PreferredDuringSchedulingIgnoredDuringExecution: []corev1.PreferredSchedulingTerm{
						{Weight: 100, Preference: expr("ssd", corev1.NodeSelectorOpExists)}},
				},
				PodAffinity: &corev1.PodAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{podTerm}},
				PodAntiAffinity: &corev1.PodAntiAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []corev1.WeightedPodAffinityTerm{
					{Weight: 1, PodAffinityTerm: podTerm}}},
			}
		}, nil},
		{"no terms", required(), []string{"Required:" + na}},
		{"In without values", required(expr("zone", corev1.NodeSelectorOpIn)), []string{"Required:" + na + "[0].matchExpressions[0].values"}},
		{"Exists with values", required(expr("zone", corev1.NodeSelectorOpExists, "a")),
			[]string{"Forbidden:" + na + "[0].matchExpressions[0].values"}},
		{"Gt not a number", required(expr("cpus", corev1.NodeSelectorOpGt, "many")),
			[]string{"Invalid:" + na + "[0].matchExpressions[0].values[0]"}},
		{"Lt with two values", required(expr("cpus", corev1.NodeSelectorOpLt, "1", "2")),
			[]string{"Required:" + na + "[0].matchExpressions[0].values"}},
		{"unknown operator", required(expr("zone", "Near", "a")), []string{"NotSupported:" + na + "[0].matchExpressions[0].operator"}},
		{"bad key", required(expr("bad key", corev1.NodeSelectorOpExists)), []string{"Invalid:" + na + "[0].matchExpressions[0].key"}},
		{"bad match field", required(corev1.NodeSelectorTerm{MatchFields: []corev1.NodeSelectorRequirement{
			{Key: "metadata.labels", Operator: corev1.NodeSelectorOpIn, Values: []string{"x"}}}}),
			[]string{"NotSupported:" + na + "[0].matchFields[0].key"}},
		{"match field with two values", required(corev1.NodeSelectorTerm{MatchFields: []corev1.NodeSelectorRequirement{
			{Key: "metadata.name", Operator: corev1.NodeSelectorOpIn, Values: []string{"a", "b"}}}}),
			[]string{"Invalid:" + na + "[0].matchFields[0].values"}},
		{"preferred weight zero", func(s *kubevirtv1.VirtualMachineInstanceSpec) {
			s.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []corev1.PreferredSchedulingTerm{
				{Weight: 0, Preference: expr("ssd", corev1.NodeSelectorOpExists)}}}}
		}, []string{"Invalid:spec.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].weight"}},
		{"pod affinity without topology key", func(s *kubevirtv1.VirtualMachineInstanceSpec) {
			s.Affinity = &corev1.Affinity{PodAffinity: &corev1.PodAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{
				{LabelSelector: podTerm.LabelSelector}}}}
		}, []string{"Required:spec.affinity.podAffinity.requiredDuringSchedulingIgnoredDuringExecution[0].topologyKey"}},
		{"pod anti-affinity with a bad selector", func(s *kubevirtv1.VirtualMachineInstanceSpec) {
			s.Affinity = &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []corev1.WeightedPodAffinityTerm{
				{Weight: 200, PodAffinityTerm: corev1.PodAffinityTerm{TopologyKey: "zone",
					LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "not valid!"}}}}}}}
		}, []string{"Invalid:spec.affinity.podAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].weight",
			"Invalid:spec.affinity.podAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].podAffinityTerm.labelSelector.matchLabels"}},
	})
}

func TestValidateTopologySpreadConstraints(t *testing.T) {
	spread := func(c corev1.TopologySpreadConstraint) func(s *kubevirtv1.VirtualMachineInstanceSpec) {
		return func(s *kubevirtv1.VirtualMachineInstanceSpec) {
			s.TopologySpreadConstraints = []corev1.TopologySpreadConstraint{c}
		}
	}
	const p = "spec.topologySpreadConstraints[0]"
	runSpecCases(t, []specCase{
		{"allowed", spread(corev1.TopologySpreadConstraint{MaxSkew: 1, TopologyKey: "topology.kubernetes.io/zone",
			WhenUnsatisfiable: corev1.DoNotSchedule, LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"a": "b"}}}), nil},
		{"all wrong", spread(corev1.TopologySpreadConstraint{WhenUnsatisfiable: "Whatever"}),
			[]string{"Invalid:" + p + ".maxSkew", "Required:" + p + ".topologyKey", "NotSupported:" + p + ".whenUnsatisfiable"}},
	})
}
