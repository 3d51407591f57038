package integration

import (
	"context"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/nativevirt/nativevirt/test/integration/framework"
)

// TestRestartKeepsObjects: a server restarted on the same data directory serves every object it
// stored, with the same UID and resourceVersion.
func TestRestartKeepsObjects(t *testing.T) {
	dir := t.TempDir()
	srv := framework.Start(t, dir)
	dyn := srv.Dynamic(t)
	type key struct{ resource, name string }
	before := map[key]string{}
	for _, rc := range resourceCases() {
		for _, name := range []string{"one", "two"} {
			rc.prepare(t, dyn, name)
			obj := createFromYAML(t, dyn, rc.gvr, rc.manifest(name))
			before[key{rc.gvr.Resource, name}] = string(obj.GetUID()) + "@" + obj.GetResourceVersion()
		}
	}
	srv.Stop()

	srv = framework.Start(t, dir)
	dyn = srv.Dynamic(t)
	after := map[key]string{}
	for _, rc := range resourceCases() {
		list, err := dyn.Resource(rc.gvr).Namespace(ns).List(context.Background(), metav1.ListOptions{})
		if err != nil {
			t.Fatalf("list %s after restart: %v", rc.gvr.Resource, err)
		}
		for _, it := range list.Items {
			after[key{rc.gvr.Resource, it.GetName()}] = string(it.GetUID()) + "@" + it.GetResourceVersion()
		}
	}
	if len(after) != len(before) {
		t.Fatalf("after restart %d objects, before %d", len(after), len(before))
	}
	for k, v := range before {
		if after[k] != v {
			t.Errorf("%v: before %s, after %s", k, v, after[k])
		}
	}
}
