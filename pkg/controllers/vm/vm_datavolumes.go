package vm

import (
	"context"
	"fmt"
	"maps"
	"sort"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"

	cdiv1beta1 "github.com/nativevirt/nativevirt/pkg/apis/cdi/v1beta1"
	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
	"github.com/nativevirt/nativevirt/pkg/controllers/internal/datavolumes"
	"github.com/nativevirt/nativevirt/pkg/controllers/internal/ownerref"
)

// Event reasons of the VM's DataVolumes, KubeVirt's.
const (
	// ReasonFailedDataVolumeImport: a DataVolume of the VM failed.
	ReasonFailedDataVolumeImport = "FailedDataVolumeImport"
	// ReasonSuccessfulDataVolumeCreate: a DataVolume was created from a dataVolumeTemplate.
	ReasonSuccessfulDataVolumeCreate = "SuccessfulDataVolumeCreate"
	// ReasonFailedDataVolumeCreate: creating it failed.
	ReasonFailedDataVolumeCreate = "FailedDataVolumeCreate"
)

// dataVolumeAPI reads and writes the VM's DataVolumes and reads claims, as function fields so
// that tests are tables of stubs. A nil get means the controller runs without DataVolumes.
type dataVolumeAPI struct {
	get    func(namespace, name string) (*cdiv1beta1.DataVolume, error)
	claim  func(namespace, name string) (*corev1.PersistentVolumeClaim, error)
	create func(ctx context.Context, dv *cdiv1beta1.DataVolume) (*cdiv1beta1.DataVolume, error)
	patch  func(ctx context.Context, namespace, name string, data []byte) error
	event  func(vm *kubevirtv1.VirtualMachine, eventType, reason, message string)
}

// volumeState sums up the VM's claims and DataVolumes for its start and its printableStatus.
type volumeState struct {
	// ready: every dataVolume volume may be used by a new instance: its DataVolume Succeeded, or
	// waits for the instance's pod as first consumer (WaitForFirstConsumer, PendingPopulation),
	// or there is no DataVolume but a claim of that name.
	ready bool
	// provisioning: a DataVolume is being populated (KubeVirt's Provisioning).
	provisioning bool
	// failed names the DataVolumes that failed or whose Running condition reports an error.
	failed []string
	// unbound: a claim of a volume exists but is not bound (WaitingForVolumeBinding).
	unbound bool
	// missing: a claim that a volume needs does not exist, nor a DataVolume making it.
	missing bool
}

// dataVolumeRunningErrors are the Running condition reasons of a failing import: CDI's Error and
// ImagePullFailed (KubeVirt's storagetypes.HasDataVolumeErrors), and CrashLoopBackOff, which
// NativeVirt's DataVolume controller reports for an importer restarting after an error (CDI says
// Error there).
var dataVolumeRunningErrors = map[string]bool{"Error": true, "ImagePullFailed": true, "CrashLoopBackOff": true}

// dataVolumeFailed says whether a DataVolume failed or reports an error while running.
func dataVolumeFailed(dv *cdiv1beta1.DataVolume) bool {
	if dv.Status.Phase == cdiv1beta1.Failed {
		return true
	}
	c := datavolumes.Condition(dv, cdiv1beta1.DataVolumeRunning)
	return c != nil && c.Status == corev1.ConditionFalse && dataVolumeRunningErrors[c.Reason]
}

// ClaimName is the claim a DataVolume fills: status.claimName, else the DataVolume's name.
func ClaimName(dv *cdiv1beta1.DataVolume) string {
	if dv.Status.ClaimName != "" {
		return dv.Status.ClaimName
	}
	return dv.Name
}

// ensure creates the DataVolumes of the VM's dataVolumeTemplates that do not exist, owned by
// the VM (a controller reference: garbage-collected with it, kept by an orphaning delete), and
// adopts one of that name that has no controller. It runs whether or not the VM runs, as
// KubeVirt's does. A DataVolume controlled by something else is left alone, with an event.
func (a *dataVolumeAPI) ensure(ctx context.Context, vm *kubevirtv1.VirtualMachine) error {
	if a.get == nil || vm.DeletionTimestamp != nil {
		return nil
	}
	ref := ownerref.Controller(kubevirtv1.SchemeGroupVersion.String(), "VirtualMachine", vm)
	var errs []error
	for i := range vm.Spec.DataVolumeTemplates {
		t := &vm.Spec.DataVolumeTemplates[i]
		dv, err := a.get(vm.Namespace, t.Name)
		switch {
		case apierrors.IsNotFound(err):
			if _, err := a.create(ctx, newDataVolume(vm, t, ref)); err != nil && !apierrors.IsAlreadyExists(err) {
				a.event(vm, corev1.EventTypeWarning, ReasonFailedDataVolumeCreate,
					fmt.Sprintf("Error creating DataVolume %s: %v", t.Name, err))
				errs = append(errs, fmt.Errorf("creating DataVolume %s: %w", t.Name, err))
				continue
			}
			klog.FromContext(ctx).Info("Created the DataVolume of a template", "dataVolume", t.Name)
			a.event(vm, corev1.EventTypeNormal, ReasonSuccessfulDataVolumeCreate, "Created DataVolume "+t.Name)
		case err != nil:
			errs = append(errs, err)
		case metav1.GetControllerOfNoCopy(dv) == nil && dv.DeletionTimestamp == nil:
			data, err := ownerref.AdoptPatch(dv, ref)
			if err == nil {
				err = a.patch(ctx, dv.Namespace, dv.Name, data)
			}
			if err != nil && !apierrors.IsNotFound(err) {
				errs = append(errs, fmt.Errorf("adopting DataVolume %s: %w", dv.Name, err))
				continue
			}
			klog.FromContext(ctx).Info("Adopted the DataVolume of a template", "dataVolume", dv.Name)
		case !ownerref.IsControlledBy(dv, vm.UID):
			a.event(vm, corev1.EventTypeWarning, ReasonFailedDataVolumeCreate,
				fmt.Sprintf("DataVolume %s exists and is controlled by another object", dv.Name))
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("%v", errs)
	}
	return nil
}

// newDataVolume is the DataVolume of a template: its name, labels and annotations, its spec,
// the VM as controller, and cdi.kubevirt.io/allowClaimAdoption.
func newDataVolume(vm *kubevirtv1.VirtualMachine, t *kubevirtv1.DataVolumeTemplateSpec, ref metav1.OwnerReference) *cdiv1beta1.DataVolume {
	dv := &cdiv1beta1.DataVolume{
		ObjectMeta: metav1.ObjectMeta{
			Name:            t.Name,
			Namespace:       vm.Namespace,
			Labels:          maps.Clone(t.Labels),
			Annotations:     maps.Clone(t.Annotations),
			OwnerReferences: []metav1.OwnerReference{ref},
		},
		Spec: *t.Spec.DeepCopy(),
	}
	// As KubeVirt does: a claim of the DataVolume's name (e.g. kept from an earlier VM) is
	// adopted as already populated instead of refused.
	if dv.Annotations == nil {
		dv.Annotations = map[string]string{}
	}
	dv.Annotations[annAllowClaimAdoption] = "true"
	return dv
}

// annAllowClaimAdoption lets a DataVolume adopt an existing claim of its name (CDI's).
const annAllowClaimAdoption = "cdi.kubevirt.io/allowClaimAdoption"

// state reads the DataVolumes and claims of the VM template's volumes.
func (a *dataVolumeAPI) state(vm *kubevirtv1.VirtualMachine) (volumeState, error) {
	st := volumeState{ready: true}
	if vm.Spec.Template == nil {
		return st, nil
	}
	failed := map[string]bool{}
	for _, v := range vm.Spec.Template.Spec.Volumes {
		claimName := ""
		switch {
		case v.DataVolume != nil:
			if a.get == nil {
				st.ready = false
				continue
			}
			dv, err := a.get(vm.Namespace, v.DataVolume.Name)
			if err != nil && !apierrors.IsNotFound(err) {
				return st, err
			}
			if dv == nil || err != nil {
				// No DataVolume (yet): a claim of that name serves, as in KubeVirt.
				claimName = v.DataVolume.Name
				if isTemplate(vm, v.DataVolume.Name) {
					st.ready, st.provisioning = false, true
					continue
				}
				break
			}
			if dataVolumeFailed(dv) {
				failed[dv.Name] = true
			}
			if !datavolumes.Usable(dv.Status.Phase) {
				st.ready = false
				st.provisioning = true
				continue
			}
			claimName = ClaimName(dv)
		case v.PersistentVolumeClaim != nil:
			claimName = v.PersistentVolumeClaim.ClaimName
		default:
			continue
		}
		if a.claim == nil {
			continue
		}
		pvc, err := a.claim(vm.Namespace, claimName)
		switch {
		case apierrors.IsNotFound(err):
			st.missing = true
			if v.DataVolume != nil {
				st.ready = false
			}
		case err != nil:
			return st, err
		case pvc.Status.Phase != corev1.ClaimBound:
			st.unbound = true
		}
	}
	for name := range failed {
		st.failed = append(st.failed, name)
	}
	sort.Strings(st.failed)
	// A failed DataVolume is not being provisioned: the VM shows DataVolumeError.
	if len(st.failed) > 0 {
		st.provisioning = false
	}
	return st, nil
}

// isTemplate says whether the VM has a dataVolumeTemplate of that name.
func isTemplate(vm *kubevirtv1.VirtualMachine, name string) bool {
	for i := range vm.Spec.DataVolumeTemplates {
		if vm.Spec.DataVolumeTemplates[i].Name == name {
			return true
		}
	}
	return false
}
