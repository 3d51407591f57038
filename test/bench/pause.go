package bench

import (
	"context"
	"fmt"
	"time"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
)

// pauseController scales a deployed nativevirt-controller to zero replicas until the returned
// resume runs (resume is also registered with OnClose, so an interrupted run restores it), and
// waits until its pods are gone. The API path suite compares API servers: the controller writes
// the status of every VM the benchmark creates through (a) and (b), while nothing writes the CRD's
// objects of (c), so with it running (a) and (b) would serve writes and deliver watch events that
// (c) does not. resume waits until the controller is ready again. note says what was done, for the suite's setup; without a deployed controller
// pauseController does nothing.
func (e *Env) pauseController(ctx context.Context) (resume func(context.Context) error, note string, err error) {
	noop := func(context.Context) error { return nil }
	ds, err := e.KubeClient.AppsV1().Deployments(metav1.NamespaceAll).List(ctx, metav1.ListOptions{FieldSelector: "metadata.name=" + controllerName})
	if err != nil {
		return noop, "", err
	}
	if len(ds.Items) == 0 {
		return noop, controllerName + " is not deployed: nothing writes the benchmark's objects", nil
	}
	d := ds.Items[0]
	deployments := e.KubeClient.AppsV1().Deployments(d.Namespace)
	scale, err := deployments.GetScale(ctx, d.Name, metav1.GetOptions{})
	if err != nil {
		return noop, "", err
	}
	replicas := scale.Spec.Replicas
	if replicas == 0 {
		return noop, fmt.Sprintf("%s/%s has 0 replicas: nothing writes the benchmark's objects", d.Namespace, d.Name), nil
	}
	setReplicas := func(ctx context.Context, n int32) error {
		_, err := deployments.UpdateScale(ctx, d.Name, &autoscalingv1.Scale{
			ObjectMeta: metav1.ObjectMeta{Name: d.Name, Namespace: d.Namespace},
			Spec:       autoscalingv1.ScaleSpec{Replicas: n},
		}, metav1.UpdateOptions{})
		return err
	}
	resumed := false
	resume = func(ctx context.Context) error {
		if resumed {
			return nil
		}
		resumed = true
		if err := setReplicas(ctx, replicas); err != nil {
			return err
		}
		// The suites after this one need the controller again.
		return wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
			cur, err := deployments.Get(ctx, d.Name, metav1.GetOptions{})
			if err != nil {
				return false, err
			}
			return cur.Status.ObservedGeneration >= cur.Generation && cur.Status.ReadyReplicas >= replicas, nil
		})
	}
	e.OnClose(fmt.Sprintf("scale %s/%s back to %d replicas", d.Namespace, d.Name, replicas), resume)
	if err := setReplicas(ctx, 0); err != nil {
		return resume, "", fmt.Errorf("scale %s/%s to 0: %w", d.Namespace, d.Name, err)
	}
	selector := metav1.FormatLabelSelector(d.Spec.Selector)
	err = wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		pods, err := e.KubeClient.CoreV1().Pods(d.Namespace).List(ctx, metav1.ListOptions{LabelSelector: selector})
		if err != nil {
			return false, err
		}
		return len(pods.Items) == 0, nil
	})
	if err != nil {
		return resume, "", fmt.Errorf("waiting for the pods of %s/%s to end: %w", d.Namespace, d.Name, err)
	}
	return resume, fmt.Sprintf("%s/%s was scaled from %d replicas to 0 for the suite and back after it: "+
		"no controller writes the objects of (a) and (b), as none writes those of (c)", d.Namespace, d.Name, replicas), nil
}
