package validation

import (
	"strconv"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/validate/content"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
)

// The launcher pod inherits these fields, and kube-apiserver validates the pod in full; the
// checks here catch the common mistakes at the VM's own API so that the user sees them on
// `kubectl apply`, not later as a pod that is never created. They are written against
// apimachinery only: NativeVirt does not import k8s.io/kubernetes.

var (
	tolerationOperators = []corev1.TolerationOperator{corev1.TolerationOpEqual, corev1.TolerationOpExists}
	taintEffects        = []corev1.TaintEffect{corev1.TaintEffectNoSchedule, corev1.TaintEffectPreferNoSchedule,
		corev1.TaintEffectNoExecute}
	nodeSelectorOperators = []corev1.NodeSelectorOperator{corev1.NodeSelectorOpIn, corev1.NodeSelectorOpNotIn,
		corev1.NodeSelectorOpExists, corev1.NodeSelectorOpDoesNotExist, corev1.NodeSelectorOpGt, corev1.NodeSelectorOpLt}
	unsatisfiableActions = []corev1.UnsatisfiableConstraintAction{corev1.DoNotSchedule, corev1.ScheduleAnyway}
	dnsPolicies          = []corev1.DNSPolicy{corev1.DNSClusterFirstWithHostNet, corev1.DNSClusterFirst, corev1.DNSDefault,
		corev1.DNSNone}
)

// validateScheduling checks the fields that shape the launcher pod's placement and DNS.
func validateScheduling(spec *kubevirtv1.VirtualMachineInstanceSpec, specPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	errs = append(errs, metav1validation.ValidateLabels(spec.NodeSelector, specPath.Child("nodeSelector"))...)
	for i := range spec.Tolerations {
		errs = append(errs, validateToleration(&spec.Tolerations[i], specPath.Child("tolerations").Index(i))...)
	}
	errs = append(errs, validateAffinity(spec.Affinity, specPath.Child("affinity"))...)
	for i := range spec.TopologySpreadConstraints {
		errs = append(errs, validateSpreadConstraint(&spec.TopologySpreadConstraints[i],
			specPath.Child("topologySpreadConstraints").Index(i))...)
	}
	if name := spec.PriorityClassName; name != "" {
		for _, msg := range content.IsDNS1123Subdomain(name) {
			errs = append(errs, field.Invalid(specPath.Child("priorityClassName"), name, msg))
		}
	}
	if spec.DNSPolicy != "" && !contains(dnsPolicies, spec.DNSPolicy) {
		errs = append(errs, field.NotSupported(specPath.Child("dnsPolicy"), string(spec.DNSPolicy), dnsPolicies))
	}
	if spec.DNSPolicy == corev1.DNSNone && spec.DNSConfig == nil {
		errs = append(errs, field.Required(specPath.Child("dnsConfig"), "required when dnsPolicy is None"))
	}
	return errs
}

// validateToleration applies the pod rules for one toleration.
func validateToleration(t *corev1.Toleration, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	if t.Key != "" {
		for _, msg := range content.IsLabelKey(t.Key) {
			errs = append(errs, field.Invalid(fldPath.Child("key"), t.Key, msg))
		}
	}
	switch t.Operator {
	case corev1.TolerationOpEqual, "":
		if t.Key == "" {
			errs = append(errs, field.Invalid(fldPath.Child("operator"), string(t.Operator),
				"must be Exists when key is empty"))
		}
		for _, msg := range content.IsLabelValue(t.Value) {
			errs = append(errs, field.Invalid(fldPath.Child("value"), t.Value, msg))
		}
	case corev1.TolerationOpExists:
		if t.Value != "" {
			errs = append(errs, field.Invalid(fldPath.Child("value"), t.Value, "must be empty when operator is Exists"))
		}
	default:
		errs = append(errs, field.NotSupported(fldPath.Child("operator"), string(t.Operator), tolerationOperators))
	}
	if t.Effect != "" && !contains(taintEffects, t.Effect) {
		errs = append(errs, field.NotSupported(fldPath.Child("effect"), string(t.Effect), taintEffects))
	}
	if t.TolerationSeconds != nil && t.Effect != corev1.TaintEffectNoExecute {
		errs = append(errs, field.Invalid(fldPath.Child("tolerationSeconds"), *t.TolerationSeconds,
			"may only be set when effect is NoExecute"))
	}
	return errs
}

// validateAffinity checks node affinity terms and pod (anti-)affinity terms.
func validateAffinity(a *corev1.Affinity, fldPath *field.Path) field.ErrorList {
	if a == nil {
		return nil
	}
	var errs field.ErrorList
	if na := a.NodeAffinity; na != nil {
		naPath := fldPath.Child("nodeAffinity")
		if req := na.RequiredDuringSchedulingIgnoredDuringExecution; req != nil {
			reqPath := naPath.Child("requiredDuringSchedulingIgnoredDuringExecution", "nodeSelectorTerms")
			if len(req.NodeSelectorTerms) == 0 {
				errs = append(errs, field.Required(reqPath, "at least one term is required"))
			}
			for i := range req.NodeSelectorTerms {
				errs = append(errs, validateNodeSelectorTerm(&req.NodeSelectorTerms[i], reqPath.Index(i))...)
			}
		}
		for i, p := range na.PreferredDuringSchedulingIgnoredDuringExecution {
			prefPath := naPath.Child("preferredDuringSchedulingIgnoredDuringExecution").Index(i)
			errs = append(errs, validateWeight(p.Weight, prefPath.Child("weight"))...)
			errs = append(errs, validateNodeSelectorTerm(&p.Preference, prefPath.Child("preference"))...)
		}
	}
	for _, pa := range []struct {
		name      string
		required  []corev1.PodAffinityTerm
		preferred []corev1.WeightedPodAffinityTerm
	}{
		{"podAffinity", podAffinityRequired(a.PodAffinity), podAffinityPreferred(a.PodAffinity)},
		{"podAntiAffinity", podAntiAffinityRequired(a.PodAntiAffinity), podAntiAffinityPreferred(a.PodAntiAffinity)},
	} {
		paPath := fldPath.Child(pa.name)
		for i := range pa.required {
			errs = append(errs, validatePodAffinityTerm(&pa.required[i],
				paPath.Child("requiredDuringSchedulingIgnoredDuringExecution").Index(i))...)
		}
		for i := range pa.preferred {
			prefPath := paPath.Child("preferredDuringSchedulingIgnoredDuringExecution").Index(i)
			errs = append(errs, validateWeight(pa.preferred[i].Weight, prefPath.Child("weight"))...)
			errs = append(errs, validatePodAffinityTerm(&pa.preferred[i].PodAffinityTerm, prefPath.Child("podAffinityTerm"))...)
		}
	}
	return errs
}

func podAffinityRequired(p *corev1.PodAffinity) []corev1.PodAffinityTerm {
	if p == nil {
		return nil
	}
	return p.RequiredDuringSchedulingIgnoredDuringExecution
}

func podAffinityPreferred(p *corev1.PodAffinity) []corev1.WeightedPodAffinityTerm {
	if p == nil {
		return nil
	}
	return p.PreferredDuringSchedulingIgnoredDuringExecution
}

func podAntiAffinityRequired(p *corev1.PodAntiAffinity) []corev1.PodAffinityTerm {
	if p == nil {
		return nil
	}
	return p.RequiredDuringSchedulingIgnoredDuringExecution
}

func podAntiAffinityPreferred(p *corev1.PodAntiAffinity) []corev1.WeightedPodAffinityTerm {
	if p == nil {
		return nil
	}
	return p.PreferredDuringSchedulingIgnoredDuringExecution
}

// validateWeight keeps a preference weight in 1..100, as the scheduler expects.
func validateWeight(w int32, fldPath *field.Path) field.ErrorList {
	if w < 1 || w > 100 {
		return field.ErrorList{field.Invalid(fldPath, w, "must be between 1 and 100, inclusive")}
	}
	return nil
}

// validateNodeSelectorTerm checks the requirements of one node selector term.
func validateNodeSelectorTerm(term *corev1.NodeSelectorTerm, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i, req := range term.MatchExpressions {
		reqPath := fldPath.Child("matchExpressions").Index(i)
		for _, msg := range content.IsLabelKey(req.Key) {
			errs = append(errs, field.Invalid(reqPath.Child("key"), req.Key, msg))
		}
		errs = append(errs, validateNodeSelectorValues(req, reqPath)...)
	}
	for i, req := range term.MatchFields {
		reqPath := fldPath.Child("matchFields").Index(i)
		if req.Key != "metadata.name" {
			errs = append(errs, field.NotSupported(reqPath.Child("key"), req.Key, []string{"metadata.name"}))
		}
		if req.Operator != corev1.NodeSelectorOpIn && req.Operator != corev1.NodeSelectorOpNotIn {
			errs = append(errs, field.NotSupported(reqPath.Child("operator"), string(req.Operator),
				[]corev1.NodeSelectorOperator{corev1.NodeSelectorOpIn, corev1.NodeSelectorOpNotIn}))
		} else if len(req.Values) != 1 {
			errs = append(errs, field.Invalid(reqPath.Child("values"), req.Values, "must have exactly one value"))
		}
	}
	return errs
}

// validateNodeSelectorValues checks that an operator has the values it needs.
func validateNodeSelectorValues(req corev1.NodeSelectorRequirement, reqPath *field.Path) field.ErrorList {
	valuesPath := reqPath.Child("values")
	switch req.Operator {
	case corev1.NodeSelectorOpIn, corev1.NodeSelectorOpNotIn:
		if len(req.Values) == 0 {
			return field.ErrorList{field.Required(valuesPath, "must be specified when operator is In or NotIn")}
		}
	case corev1.NodeSelectorOpExists, corev1.NodeSelectorOpDoesNotExist:
		if len(req.Values) > 0 {
			return field.ErrorList{field.Forbidden(valuesPath, "may not be specified when operator is Exists or DoesNotExist")}
		}
	case corev1.NodeSelectorOpGt, corev1.NodeSelectorOpLt:
		if len(req.Values) != 1 {
			return field.ErrorList{field.Required(valuesPath, "must have exactly one value when operator is Gt or Lt")}
		}
		if _, err := strconv.ParseInt(req.Values[0], 10, 64); err != nil {
			return field.ErrorList{field.Invalid(valuesPath.Index(0), req.Values[0], "must be an integer")}
		}
	default:
		return field.ErrorList{field.NotSupported(reqPath.Child("operator"), string(req.Operator), nodeSelectorOperators)}
	}
	return nil
}

// validatePodAffinityTerm requires a topology key and a well-formed label selector.
func validatePodAffinityTerm(term *corev1.PodAffinityTerm, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	opts := metav1validation.LabelSelectorValidationOptions{}
	errs = append(errs, metav1validation.ValidateLabelSelector(term.LabelSelector, opts, fldPath.Child("labelSelector"))...)
	errs = append(errs, metav1validation.ValidateLabelSelector(term.NamespaceSelector, opts, fldPath.Child("namespaceSelector"))...)
	if term.TopologyKey == "" {
		errs = append(errs, field.Required(fldPath.Child("topologyKey"), ""))
	} else {
		for _, msg := range content.IsLabelKey(term.TopologyKey) {
			errs = append(errs, field.Invalid(fldPath.Child("topologyKey"), term.TopologyKey, msg))
		}
	}
	return errs
}

// validateSpreadConstraint checks one topology spread constraint.
func validateSpreadConstraint(c *corev1.TopologySpreadConstraint, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	if c.MaxSkew < 1 {
		errs = append(errs, field.Invalid(fldPath.Child("maxSkew"), c.MaxSkew, "must be greater than 0"))
	}
	if c.TopologyKey == "" {
		errs = append(errs, field.Required(fldPath.Child("topologyKey"), ""))
	} else {
		for _, msg := range content.IsLabelKey(c.TopologyKey) {
			errs = append(errs, field.Invalid(fldPath.Child("topologyKey"), c.TopologyKey, msg))
		}
	}
	if !contains(unsatisfiableActions, c.WhenUnsatisfiable) {
		errs = append(errs, field.NotSupported(fldPath.Child("whenUnsatisfiable"), string(c.WhenUnsatisfiable), unsatisfiableActions))
	}
	errs = append(errs, metav1validation.ValidateLabelSelector(c.LabelSelector,
		metav1validation.LabelSelectorValidationOptions{}, fldPath.Child("labelSelector"))...)
	return errs
}
