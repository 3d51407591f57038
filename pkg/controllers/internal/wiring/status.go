package wiring

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ResourceVersionOf adapts a status write to answer with the written object's new
// resourceVersion only: the controllers' status writers wait for their cache to reach it.
func ResourceVersionOf[T metav1.Object](update func(ctx context.Context, obj T) (T, error)) func(ctx context.Context, obj T) (string, error) {
	return func(ctx context.Context, obj T) (string, error) {
		updated, err := update(ctx, obj)
		if err != nil {
			return "", err
		}
		return updated.GetResourceVersion(), nil
	}
}
