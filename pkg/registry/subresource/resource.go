package subresource

import (
	"net/http"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
)

// schemaResource names the requested resource for error messages, from the request info the
// filter chain parsed.
func schemaResource(r *http.Request) schema.GroupResource {
	info, ok := genericapirequest.RequestInfoFrom(r.Context())
	if !ok {
		return schema.GroupResource{Resource: strings.TrimPrefix(r.URL.Path, "/")}
	}
	res := info.Resource
	if info.Subresource != "" {
		res += "/" + info.Subresource
	}
	return schema.GroupResource{Group: info.APIGroup, Resource: res}
}
