package apiserver

import (
	"net/http"
	"sort"
	"strings"

	apidiscoveryv2 "k8s.io/api/apidiscovery/v2"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/sets"
	apirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/rest"
	genericfilters "k8s.io/apiserver/pkg/server/filters"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
	"github.com/nativevirt/nativevirt/pkg/instancetype/revision"
	"github.com/nativevirt/nativevirt/pkg/registry/hotplug"
	"github.com/nativevirt/nativevirt/pkg/registry/lifecycle"
	"github.com/nativevirt/nativevirt/pkg/registry/subresource"
	"github.com/nativevirt/nativevirt/pkg/registry/virtualmachine"
	"github.com/nativevirt/nativevirt/pkg/registry/virtualmachineinstance"
	"github.com/nativevirt/nativevirt/pkg/registry/virtualmachineinstancemigration"
	"github.com/nativevirt/nativevirt/pkg/registry/vmiproxy"
	"github.com/nativevirt/nativevirt/pkg/streams"
)

// streamSubresources are the subresources whose requests last as long as a session.
var streamSubresources = []string{string(streams.ActionConsole), string(streams.ActionVNC), string(streams.ActionPortForward)}

// LongRunningRequestCheck exempts watches and console, vnc and portforward sessions (under
// kubevirt.io and subresources.kubevirt.io alike) from the request timeout and the in-flight
// limits.
func LongRunningRequestCheck() apirequest.LongRunningRequestCheck {
	return genericfilters.BasicLongRunningRequestCheck(sets.NewString("watch"), sets.NewString(streamSubresources...))
}

// action is one subresource served in both groups, or only in subresources.kubevirt.io when its
// path is more than one segment (portforward/{port}/{protocol}, vnc/screenshot), as in KubeVirt.
type action struct {
	resource, name string
	method         string
	newFunc        func() runtime.Object
	handler        subresource.Handler
	// takesPath: the path goes on after the name (portforward/{port}/{protocol}).
	takesPath bool
	// onlySubresources: served in subresources.kubevirt.io only, as KubeVirt serves it.
	onlySubresources bool
}

// subresourcesOnly: kubevirt.io's subresources are one segment; these are served in
// subresources.kubevirt.io only.
func (ac action) subresourcesOnly() bool {
	return ac.onlySubresources || ac.takesPath || strings.Contains(ac.name, "/")
}

// actions are the action subresources of virtualmachines and virtualmachineinstances: one
// implementation each, served as kubevirt.io Connecters and by the subresources.kubevirt.io mux.
type actions struct {
	list  []action
	byKey map[string]action // "virtualmachines/start"
	// expandVMSpec serves namespaces/{ns}/expand-vm-spec, a namespaced resource of its own.
	expandVMSpec func(w http.ResponseWriter, r *http.Request, namespace string)
}

func newActions(vm *virtualmachine.Storage, vmi *virtualmachineinstance.Storage,
	mig *virtualmachineinstancemigration.Storage, extra *ExtraConfig, instancetypes *revision.Getters) *actions {
	exec := &lifecycle.Executor{
		VMs:        vm.VirtualMachine,
		VMStatus:   vm.Status,
		Instances:  vmi.VirtualMachineInstance,
		Migrations: mig.Migration,
	}
	var nodes vmiproxy.NodeResolver
	if extra.KubeClient != nil {
		exec.Pods = lifecycle.KubePodDeleter{Client: extra.KubeClient}
		nodes = vmiproxy.KubeNodeResolver{Client: extra.KubeClient}
	}
	proxy := vmiproxy.NewProxy(vmi.VirtualMachineInstance, vm.VirtualMachine, nodes, extra.NodeAgentTLS)

	a := &actions{byKey: map[string]action{}}
	for _, la := range lifecycle.Actions {
		a.add(action{resource: "virtualmachines", name: string(la), method: http.MethodPut,
			newFunc: la.NewOptions, handler: exec.Handler(la)})
	}
	volumes := &hotplug.Executor{VMs: vm.VirtualMachine, Instances: vmi.VirtualMachineInstance}
	for _, ha := range hotplug.Actions {
		a.add(action{resource: "virtualmachines", name: string(ha), method: http.MethodPut,
			newFunc: ha.NewOptions, handler: volumes.VMHandler(ha)})
		a.add(action{resource: "virtualmachineinstances", name: string(ha), method: http.MethodPut,
			newFunc: ha.NewOptions, handler: volumes.VMIHandler(ha)})
	}
	for _, sa := range streams.Actions {
		newFunc := func() runtime.Object { return vmiproxy.NewOptions(sa) }
		name := string(sa)
		if sa == streams.ActionScreenshot {
			name = "vnc/screenshot" // KubeVirt's path; RBAC sees the vnc subresource
		}
		a.add(action{resource: "virtualmachineinstances", name: name, method: sa.Method(),
			newFunc: newFunc, handler: proxy.Handler(sa), takesPath: sa.TakesPort()})
		if sa.TakesPort() {
			a.add(action{resource: "virtualmachines", name: string(sa), method: sa.Method(),
				newFunc: newFunc, handler: proxy.VMHandler(sa), takesPath: true})
		}
	}
	if instancetypes != nil {
		a.addExpand(vm, *instancetypes)
	}
	return a
}

func (a *actions) add(ac action) {
	a.list = append(a.list, ac)
	a.byKey[ac.resource+"/"+ac.name] = ac
}

// addTo registers every action whose path ends with its name as a kubevirt.io subresource.
func (a *actions) addTo(storage map[string]rest.Storage) {
	for _, ac := range a.list {
		if !ac.subresourcesOnly() {
			storage[ac.resource+"/"+ac.name] = subresource.NewConnectREST(ac.newFunc, ac.handler, ac.method)
		}
	}
}

// verb is what RBAC calls the action's method.
func verb(method string) string {
	if method == http.MethodGet {
		return "get"
	}
	return "update"
}

// kindOf names the published kind of an action, in subresources.kubevirt.io/v1.
func kindOf(ac action) string {
	kinds, _, err := Scheme.ObjectKinds(ac.newFunc())
	if err != nil || len(kinds) == 0 {
		return ""
	}
	return kinds[0].Kind
}

// discovery lists the actions for subresources.kubevirt.io/v1, plainly and aggregated. The
// parents carry no kind: the group serves no top-level resource, so `kubectl api-resources`
// lists nothing of it while clients still see every subresource with its verb.
func (a *actions) discovery() ([]metav1.APIResource, []apidiscoveryv2.APIResourceDiscovery) {
	gv := kubevirtv1.SubresourceGroupVersion
	var plain []metav1.APIResource
	parents := map[string]*apidiscoveryv2.APIResourceDiscovery{}
	for _, ac := range a.list {
		kind := kindOf(ac)
		plain = append(plain, metav1.APIResource{
			Name:       ac.resource + "/" + ac.name,
			Namespaced: true,
			Group:      gv.Group,
			Version:    gv.Version,
			Kind:       kind,
			Verbs:      metav1.Verbs{verb(ac.method)},
		})
		p := parents[ac.resource]
		if p == nil {
			p = &apidiscoveryv2.APIResourceDiscovery{
				Resource: ac.resource,
				Scope:    apidiscoveryv2.ScopeNamespace,
				Verbs:    []string{},
			}
			parents[ac.resource] = p
		}
		p.Subresources = append(p.Subresources, apidiscoveryv2.APISubresourceDiscovery{
			Subresource:  ac.name,
			ResponseKind: &metav1.GroupVersionKind{Group: gv.Group, Version: gv.Version, Kind: kind},
			Verbs:        []string{verb(ac.method)},
		})
	}
	if a.expandVMSpec != nil {
		plain, parents[expandVMSpecResource] = expandVMSpecDiscovery(plain)
	}
	names := make([]string, 0, len(parents))
	for n := range parents {
		names = append(names, n)
	}
	sort.Strings(names)
	aggregated := make([]apidiscoveryv2.APIResourceDiscovery, 0, len(names))
	for _, n := range names {
		aggregated = append(aggregated, *parents[n])
	}
	return plain, aggregated
}

// ServeHTTP serves /apis/subresources.kubevirt.io/v1/namespaces/{ns}/{resource}/{name}/{action}
// (and .../portforward/{port}[/{protocol}]). The filter chain has already authenticated the
// caller and authorized the request as the subresource in group subresources.kubevirt.io.
func (a *actions) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rest, ok := strings.CutPrefix(r.URL.Path, subresourcesGroupPath+"/"+kubevirtv1.SubresourceGroupVersion.Version+"/namespaces/")
	parts := strings.Split(rest, "/")
	if ok && len(parts) == 2 && parts[0] != "" && parts[1] == expandVMSpecResource && a.expandVMSpec != nil {
		a.expandVMSpec(w, r, parts[0])
		return
	}
	if !ok || len(parts) < 4 || parts[0] == "" || parts[2] == "" {
		subresource.WriteError(w, apierrors.NewNotFound(kubevirtv1.SubresourceGroupVersion.WithResource("").GroupResource(), r.URL.Path))
		return
	}
	ns, resource, name, act := parts[0], parts[1], parts[2], parts[3]
	if len(parts) == 5 {
		if _, nested := a.byKey[resource+"/"+act+"/"+parts[4]]; nested {
			act += "/" + parts[4] // vnc/screenshot
		}
	}
	ac, found := a.byKey[resource+"/"+act]
	if found && len(parts) > 4+strings.Count(act, "/") && !ac.takesPath {
		found = false
	}
	if !found {
		subresource.WriteError(w, apierrors.NewNotFound(
			kubevirtv1.SubresourceGroupVersion.WithResource(resource+"/"+act).GroupResource(), name))
		return
	}
	ac.handler.ServeAction(w, r, ns, name)
}
