package apiserver

import (
	"encoding/json"
	"net/http"
	"runtime"

	apidiscoveryv2 "k8s.io/api/apidiscovery/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	genericapiserver "k8s.io/apiserver/pkg/server"
	"k8s.io/component-base/version"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
)

// subresourcesGroupPath is where KubeVirt's virtctl finds the VM and VMI actions.
const subresourcesGroupPath = "/apis/" + kubevirtv1.SubresourceGroupName

// installSubresourcesGroup serves discovery, /version and /healthz of subresources.kubevirt.io/v1,
// announces the group in /apis (plain and aggregated discovery), and serves the VM and VMI
// actions at virtctl's paths below namespaces/.
func installSubresourcesGroup(s *genericapiserver.GenericAPIServer, acts *actions) error {
	plain, aggregated := acts.discovery()
	gv := kubevirtv1.SubresourceGroupVersion
	gvd := metav1.GroupVersionForDiscovery{GroupVersion: gv.String(), Version: gv.Version}
	group := metav1.APIGroup{
		TypeMeta:         metav1.TypeMeta{Kind: "APIGroup", APIVersion: "v1"},
		Name:             gv.Group,
		Versions:         []metav1.GroupVersionForDiscovery{gvd},
		PreferredVersion: gvd,
	}
	resources := metav1.APIResourceList{
		TypeMeta:     metav1.TypeMeta{Kind: "APIResourceList", APIVersion: "v1"},
		GroupVersion: gv.String(),
		APIResources: plain,
	}
	s.DiscoveryGroupManager.AddGroup(group)
	s.AggregatedDiscoveryGroupManager.AddGroupVersion(gv.Group, apidiscoveryv2.APIVersionDiscovery{
		Version:   gv.Version,
		Freshness: apidiscoveryv2.DiscoveryFreshnessCurrent,
		Resources: aggregated,
	})

	mux := s.Handler.NonGoRestfulMux
	mux.Handle(subresourcesGroupPath, jsonHandler(group))
	mux.Handle(subresourcesGroupPath+"/"+gv.Version, jsonHandler(resources))
	mux.HandleFunc(subresourcesGroupPath+"/"+gv.Version+"/version", func(w http.ResponseWriter, _ *http.Request) {
		info := version.Get()
		info.GoVersion = runtime.Version()
		writeJSON(w, http.StatusOK, info)
	})
	mux.HandlePrefix(subresourcesGroupPath+"/"+gv.Version+"/namespaces/", acts)
	mux.HandleFunc(subresourcesGroupPath+"/"+gv.Version+"/healthz", func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusOK, map[string]string{"apiserver": "ok"})
	})
	return nil
}

func jsonHandler(obj interface{}) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet {
			w.Header().Set("Allow", http.MethodGet)
			http.Error(w, "only GET is served here", http.StatusMethodNotAllowed)
			return
		}
		writeJSON(w, http.StatusOK, obj)
	})
}

func writeJSON(w http.ResponseWriter, code int, obj interface{}) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(obj)
}
