package lifecycle

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
)

// KubePodDeleter deletes launcher pods through the Kubernetes API.
type KubePodDeleter struct {
	Client kubernetes.Interface
}

var _ PodDeleter = KubePodDeleter{}

// DeleteLauncherPods deletes every launcher pod of the instance (label
// kubevirt.io/created-by=<uid>) with grace period 0, so that the kubelet kills it at once.
func (d KubePodDeleter) DeleteLauncherPods(ctx context.Context, namespace string, vmiUID types.UID, dryRun bool) error {
	selector := labels.Set{
		kubevirtv1.AppLabel:       "virt-launcher",
		kubevirtv1.CreatedByLabel: string(vmiUID),
	}.AsSelector().String()
	pods, err := d.Client.CoreV1().Pods(namespace).List(ctx, metav1.ListOptions{LabelSelector: selector})
	if err != nil {
		return apierrors.NewServiceUnavailable(fmt.Sprintf("listing launcher pods: %v", err))
	}
	zero := int64(0)
	var dry []string
	if dryRun {
		dry = []string{metav1.DryRunAll}
	}
	for _, p := range pods.Items {
		uid := p.UID
		err := d.Client.CoreV1().Pods(namespace).Delete(ctx, p.Name, metav1.DeleteOptions{
			GracePeriodSeconds: &zero,
			Preconditions:      &metav1.Preconditions{UID: &uid},
			DryRun:             dry,
		})
		if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
			return apierrors.NewServiceUnavailable(fmt.Sprintf("deleting launcher pod %s: %v", p.Name, err))
		}
	}
	return nil
}
