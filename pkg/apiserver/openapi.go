package apiserver

import (
	openapinamer "k8s.io/apiserver/pkg/endpoints/openapi"
	genericapiserver "k8s.io/apiserver/pkg/server"
	"k8s.io/component-base/version"

	generatedopenapi "github.com/nativevirt/nativevirt/pkg/generated/openapi"
)

// SetOpenAPI configures OpenAPI v2 and v3 from the generated definitions. It must run before
// RecommendedOptions.ApplyTo: authentication adds its security definitions to these configs,
// and server-side apply builds its type converter from the v3 one.
func SetOpenAPI(cfg *genericapiserver.RecommendedConfig) {
	// The namer reads group/version/kind from a scheme holding only the served versions, so the
	// published x-kubernetes-group-version-kind extensions never mention the internal version.
	namer := openapinamer.NewDefinitionNamer(servedScheme)
	v := version.Get().GitVersion
	cfg.OpenAPIConfig = genericapiserver.DefaultOpenAPIConfig(generatedopenapi.GetOpenAPIDefinitions, namer)
	cfg.OpenAPIConfig.Info.Title = "NativeVirt"
	cfg.OpenAPIConfig.Info.Version = v
	cfg.OpenAPIV3Config = genericapiserver.DefaultOpenAPIV3Config(generatedopenapi.GetOpenAPIDefinitions, namer)
	cfg.OpenAPIV3Config.Info.Title = "NativeVirt"
	cfg.OpenAPIV3Config.Info.Version = v
}
