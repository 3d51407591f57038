package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
)

// CRDGroup is the group of the CRD target (c): not kubevirt.io, which the APIService owns.
const CRDGroup = "kubevirt.bench.nativevirt.io"

// CRDResource is the VirtualMachine resource of the CRD target. Its kind is VirtualMachine, but
// its plural and singular names are not virtualmachine(s): kubectl resolves those names across
// groups, and other users of the cluster mean kubevirt.io by them while the benchmark runs.
var CRDResource = schema.GroupVersionResource{Group: CRDGroup, Version: "v1", Resource: "benchvirtualmachines"}

// InstallCRD creates the CRD of target (c): KubeVirt's VirtualMachine kind under CRDGroup, with
// the structural schema generated from nativevirt-apiserver's OpenAPI v3 (direct), a status
// subresource and KubeVirt's printer columns. It returns the schema's JSON size. Close deletes
// the CRD (and so every object of it).
func (e *Env) InstallCRD(ctx context.Context) (int, error) {
	return installCRD(ctx, e.Direct, e.Kube, func(name string, remove func(context.Context) error) {
		if !e.crdInstalled { // not again when a suite runs again
			e.crdInstalled = true
			e.OnClose("CRD "+name, remove)
		}
	})
}

// installCRD installs the CRD of target (c) into the kube-apiserver of kube, with the schema of
// the nativevirt-apiserver of openapi; installed is told how to remove it.
func installCRD(ctx context.Context, openapi, kube *rest.Config, installed func(name string, remove func(context.Context) error)) (int, error) {
	doc, err := GetRaw(ctx, openapi, "/openapi/v3/apis/kubevirt.io/v1")
	if err != nil {
		return 0, fmt.Errorf("OpenAPI v3 of kubevirt.io/v1: %w", err)
	}
	props, err := StructuralSchema(doc, schema.GroupVersionKind{Group: "kubevirt.io", Version: "v1", Kind: "VirtualMachine"}, true)
	if err != nil {
		return 0, err
	}
	schemaJSON, err := json.Marshal(props)
	if err != nil {
		return 0, err
	}
	crd := &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{
			Name:   CRDResource.Resource + "." + CRDGroup,
			Labels: map[string]string{"nativevirt.io/bench": "true"},
		},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: CRDGroup,
			Names: apiextensionsv1.CustomResourceDefinitionNames{
				Plural: CRDResource.Resource, Singular: "benchvirtualmachine", Kind: "VirtualMachine", ListKind: "VirtualMachineList",
			},
			Scope: apiextensionsv1.NamespaceScoped,
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{
				Name: "v1", Served: true, Storage: true,
				Schema:       &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: props},
				Subresources: &apiextensionsv1.CustomResourceSubresources{Status: &apiextensionsv1.CustomResourceSubresourceStatus{}},
				AdditionalPrinterColumns: []apiextensionsv1.CustomResourceColumnDefinition{
					{Name: "Age", Type: "date", JSONPath: ".metadata.creationTimestamp"},
					{Name: "Status", Type: "string", JSONPath: ".status.printableStatus", Description: "Human readable status"},
					{Name: "Ready", Type: "string", JSONPath: ".status.conditions[?(@.type=='Ready')].status", Description: "Ready"},
				},
			}},
		},
	}
	cs, err := apiextensionsclient.NewForConfig(kube)
	if err != nil {
		return 0, err
	}
	crds := cs.ApiextensionsV1().CustomResourceDefinitions()
	if err := deleteCRD(ctx, crds, crd.Name); err != nil { // left behind by an interrupted run
		return 0, err
	}
	if _, err := crds.Create(ctx, crd, metav1.CreateOptions{}); err != nil {
		return 0, fmt.Errorf("create CRD %s: %w", crd.Name, err)
	}
	installed(crd.Name, func(ctx context.Context) error { return deleteCRD(ctx, crds, crd.Name) })
	err = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		got, err := crds.Get(ctx, crd.Name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		for _, c := range got.Status.Conditions {
			if c.Type == apiextensionsv1.Established && c.Status == apiextensionsv1.ConditionTrue {
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		return 0, fmt.Errorf("CRD %s not Established: %w", crd.Name, err)
	}
	// Established comes slightly before the handler serves the resource.
	dc, err := NewClient(kube)
	if err != nil {
		return 0, err
	}
	err = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		_, err := dc.Resource(CRDResource).Namespace("default").List(ctx, metav1.ListOptions{Limit: 1})
		return err == nil, nil
	})
	return len(schemaJSON), err
}

// deleteCRD deletes a CRD and waits until it is gone.
func deleteCRD(ctx context.Context, crds interface {
	Delete(context.Context, string, metav1.DeleteOptions) error
	Get(context.Context, string, metav1.GetOptions) (*apiextensionsv1.CustomResourceDefinition, error)
}, name string) error {
	err := crds.Delete(ctx, name, metav1.DeleteOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	return wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, 5*time.Minute, true, func(ctx context.Context) (bool, error) {
		_, err := crds.Get(ctx, name, metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	})
}

// GetRaw GETs a path of the server of cfg and returns the body of a 200 response.
func GetRaw(ctx context.Context, cfg *rest.Config, path string) ([]byte, error) {
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimSuffix(cfg.Host, "/")+path, nil)
	if err != nil {
		return nil, err
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %s: %.200s", path, resp.Status, b)
	}
	return b, nil
}
