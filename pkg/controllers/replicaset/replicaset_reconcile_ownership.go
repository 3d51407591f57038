package replicaset

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/klog/v2"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
	"github.com/nativevirt/nativevirt/pkg/controllers/internal/ownerref"
	"github.com/nativevirt/nativevirt/pkg/controllers/internal/vmis"
)

// rsKind is the kind named in the owner reference of a replica set's instances.
const rsKind = "VirtualMachineInstanceReplicaSet"

// ownershipAPI is what claiming writes, as function fields so that tests are tables of stubs.
type ownershipAPI struct {
	// patch applies a JSON merge patch to an instance.
	patch func(ctx context.Context, namespace, name string, data []byte) (*kubevirtv1.VirtualMachineInstance, error)
	// getRS reads the replica set from the server, bypassing the cache.
	getRS func(ctx context.Context, namespace, name string) (*kubevirtv1.VirtualMachineInstanceReplicaSet, error)
}

// claim returns the instances the replica set owns after adopting the orphans its selector
// matches and releasing its instances the selector no longer matches, as Kubernetes'
// ControllerRefManager does for pods. Only active instances are adopted, and only after a fresh
// read shows the replica set is neither replaced nor being deleted.
func (a *ownershipAPI) claim(ctx context.Context, rs *kubevirtv1.VirtualMachineInstanceReplicaSet,
	selector labels.Selector, all []*kubevirtv1.VirtualMachineInstance) ([]*kubevirtv1.VirtualMachineInstance, error) {
	var owned []*kubevirtv1.VirtualMachineInstance
	var errs []error
	canAdopt := func() (bool, error) {
		if rs.DeletionTimestamp != nil {
			return false, nil
		}
		fresh, err := a.getRS(ctx, rs.Namespace, rs.Name)
		if err != nil {
			return false, err
		}
		return fresh.UID == rs.UID && fresh.DeletionTimestamp == nil, nil
	}
	var adoptable *bool

	for _, vmi := range all {
		matches := selector.Matches(labels.Set(vmi.Labels))
		if ref := metav1.GetControllerOfNoCopy(vmi); ref != nil {
			if ref.UID != rs.UID {
				continue
			}
			if matches && rs.DeletionTimestamp == nil {
				owned = append(owned, vmi)
				continue
			}
			if matches || vmis.IsTerminating(vmi) {
				// Being deleted with its replica set: leave it to the garbage collector.
				continue
			}
			if err := a.release(ctx, rs, vmi); err != nil {
				errs = append(errs, err)
			}
			continue
		}
		if !matches || !vmis.IsActive(vmi) {
			continue
		}
		if adoptable == nil {
			ok, err := canAdopt()
			if err != nil {
				return owned, fmt.Errorf("re-reading the replica set before adopting: %w", err)
			}
			adoptable = &ok
		}
		if !*adoptable {
			continue
		}
		adopted, err := a.adopt(ctx, rs, vmi)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if adopted != nil {
			owned = append(owned, adopted)
		}
	}
	if len(errs) > 0 {
		return owned, fmt.Errorf("claiming instances: %v", errs)
	}
	return owned, nil
}

func (a *ownershipAPI) adopt(ctx context.Context, rs *kubevirtv1.VirtualMachineInstanceReplicaSet,
	vmi *kubevirtv1.VirtualMachineInstance) (*kubevirtv1.VirtualMachineInstance, error) {
	data, err := ownerref.AdoptPatch(vmi, ownerref.Controller(kubevirtv1.SchemeGroupVersion.String(), rsKind, rs))
	if err != nil {
		return nil, err
	}
	adopted, err := a.patch(ctx, vmi.Namespace, vmi.Name, data)
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("adopting %s: %w", vmi.Name, err)
	}
	klog.FromContext(ctx).Info("Adopted instance", "vmi", klog.KObj(vmi))
	return adopted, nil
}

func (a *ownershipAPI) release(ctx context.Context, rs *kubevirtv1.VirtualMachineInstanceReplicaSet,
	vmi *kubevirtv1.VirtualMachineInstance) error {
	data, err := ownerref.ReleasePatch(vmi, rs.UID)
	if err != nil {
		return err
	}
	if _, err := a.patch(ctx, vmi.Namespace, vmi.Name, data); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("releasing %s: %w", vmi.Name, err)
	}
	klog.FromContext(ctx).Info("Released instance the selector no longer matches", "vmi", klog.KObj(vmi))
	return nil
}
