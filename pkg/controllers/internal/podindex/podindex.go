// Package podindex indexes launcher pods by the UID of their instance (the
// kubevirt.io/created-by label), so that controllers find an instance's pods without listing.
package podindex

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/tools/cache"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
	"github.com/nativevirt/nativevirt/pkg/launcherpod"
)

// ByVMIUID is the name of the index.
const ByVMIUID = "vmiUID"

// LauncherSelector selects launcher pods; the pod informer lists only those.
var LauncherSelector = labels.SelectorFromSet(labels.Set{kubevirtv1.AppLabel: launcherpod.LauncherLabelValue}).String()

func indexFunc(obj any) ([]string, error) {
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return nil, nil
	}
	if uid := pod.Labels[kubevirtv1.CreatedByLabel]; uid != "" {
		return []string{uid}, nil
	}
	return nil, nil
}

// Ensure adds the index to the pod informer unless a controller sharing it already did. It must
// run before the informer starts.
func Ensure(informer cache.SharedIndexInformer) error {
	if _, ok := informer.GetIndexer().GetIndexers()[ByVMIUID]; ok {
		return nil
	}
	return informer.AddIndexers(cache.Indexers{ByVMIUID: indexFunc})
}

// PodsOf returns the launcher pods of the instance with uid, in cache order.
func PodsOf(indexer cache.Indexer, uid string) ([]*corev1.Pod, error) {
	objs, err := indexer.ByIndex(ByVMIUID, uid)
	if err != nil {
		return nil, err
	}
	pods := make([]*corev1.Pod, 0, len(objs))
	for _, o := range objs {
		if p, ok := o.(*corev1.Pod); ok {
			pods = append(pods, p)
		}
	}
	return pods, nil
}
