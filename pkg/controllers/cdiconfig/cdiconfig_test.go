package cdiconfig

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/nativevirt/nativevirt/pkg/apis/cdi/v1beta1"
)

func node(name string, ready bool, addrs ...corev1.NodeAddress) *corev1.Node {
	st := corev1.ConditionFalse
	if ready {
		st = corev1.ConditionTrue
	}
	return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}, Status: corev1.NodeStatus{
		Addresses: addrs, Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: st}}}}
}

func TestUploadProxyURL(t *testing.T) {
	internal := func(ip string) corev1.NodeAddress {
		return corev1.NodeAddress{Type: corev1.NodeInternalIP, Address: ip}
	}
	external := func(ip string) corev1.NodeAddress {
		return corev1.NodeAddress{Type: corev1.NodeExternalIP, Address: ip}
	}
	for _, tc := range []struct {
		name  string
		nodes []*corev1.Node
		port  int32
		want  string
	}{
		{name: "no port", nodes: []*corev1.Node{node("a", true, internal("10.0.0.1"))}, want: ""},
		{name: "first ready by name", nodes: []*corev1.Node{node("b", true, internal("10.0.0.2")), node("a", false, internal("10.0.0.1")),
			node("c", true, internal("10.0.0.3"))}, port: 31001, want: "https://10.0.0.2:31001"},
		{name: "internal first", nodes: []*corev1.Node{node("a", true, external("1.2.3.4"), internal("10.0.0.1"))}, port: 30000, want: "https://10.0.0.1:30000"},
		{name: "ipv6", nodes: []*corev1.Node{node("a", true, internal("fd00::1"))}, port: 30000, want: "https://[fd00::1]:30000"},
		{name: "no ready node", nodes: []*corev1.Node{node("a", false, internal("10.0.0.1"))}, port: 30000, want: ""},
	} {
		if got := UploadProxyURL(tc.nodes, tc.port); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}

// TestSync: config is created when missing and its status gets the URL, once.
func TestSync(t *testing.T) {
	idx := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
	_ = idx.Add(node("n1", true, corev1.NodeAddress{Type: corev1.NodeInternalIP, Address: "10.88.0.2"}))
	var stored *v1beta1.CDIConfig
	updates := 0
	c := &Controller{nodes: corelisters.NewNodeLister(idx),
		get: func(context.Context) (*v1beta1.CDIConfig, error) {
			if stored == nil {
				return nil, apierrors.NewNotFound(schema.GroupResource{Resource: "cdiconfigs"}, ConfigName)
			}
			return stored.DeepCopy(), nil
		},
		create: func(_ context.Context, cfg *v1beta1.CDIConfig) (*v1beta1.CDIConfig, error) {
			stored = cfg.DeepCopy()
			return cfg, nil
		},
		updateStatus: func(_ context.Context, cfg *v1beta1.CDIConfig) error {
			updates++
			stored = cfg.DeepCopy()
			return nil
		},
		nodePort: func(context.Context) (int32, error) { return 31443, nil },
	}
	for range 2 {
		if _, err := c.sync(context.Background(), ConfigName); err != nil {
			t.Fatal(err)
		}
	}
	if stored == nil || stored.Name != ConfigName || stored.Status.UploadProxyURL == nil || *stored.Status.UploadProxyURL != "https://10.88.0.2:31443" {
		t.Fatalf("config %+v", stored)
	}
	if updates != 1 {
		t.Errorf("%d status updates, want 1", updates)
	}
}
