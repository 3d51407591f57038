package instancetype

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/registry/generic"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/apiserver/pkg/storage"
	"k8s.io/apiserver/pkg/storage/storagebackend"
	"k8s.io/apiserver/pkg/storage/storagebackend/factory"
	"k8s.io/client-go/tools/cache"

	"github.com/nativevirt/nativevirt/pkg/apis/instancetype/install"
	"github.com/nativevirt/nativevirt/pkg/registry/store"
)

// noStorage builds stores without a backend: enough to inspect what discovery and the generic
// registry see of them (the integration tests store objects in a real etcd).
type noStorage struct{}

func (noStorage) GetRESTOptions(resource schema.GroupResource, _ runtime.Object) (generic.RESTOptions, error) {
	return generic.RESTOptions{
		StorageConfig:  &storagebackend.ConfigForResource{GroupResource: resource},
		ResourcePrefix: resource.Group + "/" + resource.Resource,
		Decorator: func(*storagebackend.ConfigForResource, string, func(runtime.Object) (string, error),
			func() runtime.Object, func() runtime.Object, storage.AttrFunc, storage.IndexerFuncs,
			*cache.Indexers) (storage.Interface, factory.DestroyFunc, error) {
			return nil, func() {}, nil
		},
	}, nil
}

// TestStorageDiscovery: the four resources with KubeVirt's scopes, short names and categories.
func TestStorageDiscovery(t *testing.T) {
	scheme := runtime.NewScheme()
	install.Install(scheme)
	resources, err := NewStorage(scheme, noStorage{})
	if err != nil {
		t.Fatal(err)
	}
	type discovery struct {
		Namespaced bool
		ShortNames []string
		Categories []string
		Singular   string
	}
	got := map[string]discovery{}
	for name, s := range resources {
		r, ok := s.(*store.REST)
		if !ok {
			t.Fatalf("%s: %T, want *store.REST", name, s)
		}
		var _ rest.StandardStorage = r
		got[name] = discovery{r.NamespaceScoped(), r.ShortNames(), r.Categories(), r.GetSingularName()}
	}
	want := map[string]discovery{
		"virtualmachineinstancetypes": {true, []string{"vminstancetype", "vminstancetypes", "vmf", "vmfs"}, []string{"all"},
			"virtualmachineinstancetype"},
		"virtualmachineclusterinstancetypes": {false, []string{"vmclusterinstancetype", "vmclusterinstancetypes", "vmcf", "vmcfs"}, nil,
			"virtualmachineclusterinstancetype"},
		"virtualmachinepreferences": {true, []string{"vmpref", "vmprefs", "vmp", "vmps"}, []string{"all"},
			"virtualmachinepreference"},
		"virtualmachineclusterpreferences": {false, []string{"vmcp", "vmcps"}, nil,
			"virtualmachineclusterpreference"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("discovery (-want +got):\n%s", diff)
	}
}
