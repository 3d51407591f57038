// Command models-schema prints the OpenAPI v2 definitions generated for
// NativeVirt's types (and the Kubernetes types they use) as one swagger
// document on stdout. hack/update-codegen.sh feeds it to
// applyconfiguration-gen, which needs it to learn list types and map keys.
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"

	"k8s.io/kube-openapi/pkg/common"
	"k8s.io/kube-openapi/pkg/util"
	"k8s.io/kube-openapi/pkg/validation/spec"

	"github.com/nativevirt/nativevirt/pkg/generated/openapi"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintf(os.Stderr, "models-schema: %v\n", err)
		os.Exit(1)
	}
}

func run() error {
	ref := func(name string) spec.Ref {
		return spec.MustCreateRef("#/definitions/" + modelName(name))
	}
	defs := openapi.GetOpenAPIDefinitions(ref)
	schemas := make(map[string]spec.Schema, len(defs))
	for name, def := range defs {
		schema := def.Schema
		// Types with a hand-written v3 schema carry their v2 form in an extension.
		if v2, ok := def.Schema.Extensions[common.ExtensionV2Schema].(spec.Schema); ok {
			schema = v2
		}
		schemas[modelName(name)] = schema
	}
	doc := &spec.Swagger{SwaggerProps: spec.SwaggerProps{
		Swagger:     "2.0",
		Info:        &spec.Info{InfoProps: spec.InfoProps{Title: "NativeVirt models", Version: "unversioned"}},
		Definitions: schemas,
	}}
	out, err := json.Marshal(doc)
	if err != nil {
		return fmt.Errorf("encoding the definitions: %w", err)
	}
	_, err = os.Stdout.Write(out)
	return err
}

// modelName turns a Go type path (k8s.io/api/core/v1.Pod) into the
// REST-friendly model name (io.k8s.api.core.v1.Pod) that
// applyconfiguration-gen looks up. Types with an OpenAPIModelName already
// arrive in that form and are kept as they are.
func modelName(name string) string {
	if !strings.Contains(name, "/") {
		return name
	}
	return util.ToRESTFriendlyName(name)
}
