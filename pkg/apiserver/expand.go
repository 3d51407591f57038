package apiserver

import (
	"net/http"
	"reflect"

	apidiscoveryv2 "k8s.io/api/apidiscovery/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
	"github.com/nativevirt/nativevirt/pkg/apiserver/shapecheck"
	"github.com/nativevirt/nativevirt/pkg/instancetype/revision"
	"github.com/nativevirt/nativevirt/pkg/registry/subresource"
	"github.com/nativevirt/nativevirt/pkg/registry/virtualmachine"
)

// expandVMSpecResource is KubeVirt's resource that expands a VirtualMachine sent to it (PUT,
// RBAC verb update); `virtctl expand --file` uses it.
const expandVMSpecResource = "expand-vm-spec"

// addExpand serves what `virtctl expand` calls: virtualmachines/{name}/expand-spec (GET, the
// stored VM) and expand-vm-spec (PUT, a VM in the body), both in subresources.kubevirt.io only.
func (a *actions) addExpand(vm *virtualmachine.Storage, g revision.Getters) {
	newVM := func() runtime.Object { return &kubevirtv1.VirtualMachine{} }
	a.add(action{resource: "virtualmachines", name: "expand-spec", method: http.MethodGet, newFunc: newVM,
		handler: virtualmachine.ExpandSpecHandler(vm.VirtualMachine, g), onlySubresources: true})
	expand := virtualmachine.ExpandVMSpecHandler(g)
	a.expandVMSpec = func(w http.ResponseWriter, r *http.Request, namespace string) {
		// The handler's JSON decoder says what is wrong with a value, not where.
		if err := shapecheck.CheckBody(r, reflect.TypeFor[kubevirtv1.VirtualMachine](), expandBodyLimit); err != nil {
			subresource.WriteError(w, err)
			return
		}
		expand(w, r, namespace)
	}
}

// expandBodyLimit is the largest expand-vm-spec body the shape check reads: the handler's own
// limit, kube-apiserver's for a request.
const expandBodyLimit = 3 * 1024 * 1024

// expandVMSpecDiscovery adds expand-vm-spec to the group's discovery: a namespaced resource
// with the verb update whose answer is a VirtualMachine.
func expandVMSpecDiscovery(plain []metav1.APIResource) ([]metav1.APIResource, *apidiscoveryv2.APIResourceDiscovery) {
	gv := kubevirtv1.SubresourceGroupVersion
	plain = append(plain, metav1.APIResource{
		Name: expandVMSpecResource, Namespaced: true, Group: gv.Group, Version: gv.Version,
		Kind: "VirtualMachine", Verbs: metav1.Verbs{"update"},
	})
	return plain, &apidiscoveryv2.APIResourceDiscovery{
		Resource:     expandVMSpecResource,
		Scope:        apidiscoveryv2.ScopeNamespace,
		ResponseKind: &metav1.GroupVersionKind{Group: gv.Group, Version: gv.Version, Kind: "VirtualMachine"},
		Verbs:        []string{"update"},
	}
}
