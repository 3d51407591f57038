package apiserver

import (
	"net/http"

	genericapiserver "k8s.io/apiserver/pkg/server"

	cdiv1beta1 "github.com/nativevirt/nativevirt/pkg/apis/cdi/v1beta1"
	instancetypev1beta1 "github.com/nativevirt/nativevirt/pkg/apis/instancetype/v1beta1"
	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
	"github.com/nativevirt/nativevirt/pkg/apiserver/shapecheck"
)

// GuardPatches puts shapecheck.PatchGuard in front of cfg's API handlers, inside the generic
// filters (authenticated, authorized, the request's resource known): a strategic merge patch
// that k8s.io/apimachinery would answer with a 500 or a panic gets a 400 naming the field. It
// must run after the configuration's BuildHandlerChainFunc is set (NewRecommendedConfig sets it).
func GuardPatches(cfg *genericapiserver.RecommendedConfig) {
	build := cfg.BuildHandlerChainFunc
	cfg.BuildHandlerChainFunc = func(h http.Handler, c *genericapiserver.Config) http.Handler {
		guarded := shapecheck.NewPatchGuard(h, Scheme, Codecs, c.MaxRequestBodyBytes,
			kubevirtv1.GroupName, instancetypev1beta1.GroupName, cdiv1beta1.GroupName)
		return build(guarded, c)
	}
}
