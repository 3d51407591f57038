package bench

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
)

// controllerDeployment is the deployed nativevirt-controller.
func (e *Env) controllerDeployment(ctx context.Context) (*appsv1.Deployment, error) {
	ds, err := e.KubeClient.AppsV1().Deployments(metav1.NamespaceAll).List(ctx, metav1.ListOptions{FieldSelector: "metadata.name=" + controllerName})
	if err != nil {
		return nil, err
	}
	if len(ds.Items) == 0 {
		return nil, fmt.Errorf("%s not deployed", controllerName)
	}
	return &ds.Items[0], nil
}

// controllerFlag is the value of the deployed controller's --name=value flag ("" when unset).
func (e *Env) controllerFlag(ctx context.Context, name string) (string, error) {
	d, err := e.controllerDeployment(ctx)
	if err != nil {
		return "", err
	}
	for _, a := range d.Spec.Template.Spec.Containers[0].Args {
		if v, ok := strings.CutPrefix(a, "--"+name+"="); ok {
			return v, nil
		}
	}
	return "", nil
}

// withFlag returns args with --name=value in place of any --name=... (appended when missing).
func withFlag(args []string, name, value string) []string {
	out := slices.DeleteFunc(slices.Clone(args), func(a string) bool { return strings.HasPrefix(a, "--"+name+"=") })
	return append(out, "--"+name+"="+value)
}

// setControllerFlag runs the deployed controller with --name=value until the returned restore
// runs (also registered with OnClose), and waits until the new pods are ready and the old ones
// gone (one of them then holds the leader lease: the caller warms up before measuring).
func (e *Env) setControllerFlag(ctx context.Context, name, value string) (restore func(context.Context) error, err error) {
	d, err := e.controllerDeployment(ctx)
	if err != nil {
		return nil, err
	}
	original := slices.Clone(d.Spec.Template.Spec.Containers[0].Args)
	set := func(ctx context.Context, args []string) error {
		deployments := e.KubeClient.AppsV1().Deployments(d.Namespace)
		cur, err := deployments.Get(ctx, d.Name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if slices.Equal(cur.Spec.Template.Spec.Containers[0].Args, args) {
			return nil
		}
		cur.Spec.Template.Spec.Containers[0].Args = args
		if _, err := deployments.Update(ctx, cur, metav1.UpdateOptions{}); err != nil {
			return err
		}
		return wait.PollUntilContextTimeout(ctx, time.Second, 3*time.Minute, true, func(ctx context.Context) (bool, error) {
			cur, err := deployments.Get(ctx, d.Name, metav1.GetOptions{})
			if err != nil {
				return false, err
			}
			want := *cur.Spec.Replicas
			s := cur.Status
			return s.ObservedGeneration >= cur.Generation && s.UpdatedReplicas == want && s.ReadyReplicas == want && s.Replicas == want, nil
		})
	}
	restored := false
	restore = func(ctx context.Context) error {
		if restored {
			return nil
		}
		restored = true
		return set(ctx, original)
	}
	e.OnClose(fmt.Sprintf("%s/%s back to its flags", d.Namespace, d.Name), restore)
	if err := set(ctx, withFlag(original, name, value)); err != nil {
		return restore, fmt.Errorf("%s/%s with --%s=%s: %w", d.Namespace, d.Name, name, value, err)
	}
	return restore, nil
}
