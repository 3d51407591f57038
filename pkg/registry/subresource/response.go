package subresource

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// maxBodyBytes caps an options body; real ones are a few dozen bytes.
const maxBodyBytes = 64 * 1024

// DecodeBody decodes the JSON options body of r into into. An empty body leaves into as it is
// (every option has a default). Anything that is not a JSON object of the right shape is a 400.
// Unknown fields are ignored, as KubeVirt does, so newer clients keep working.
func DecodeBody(r *http.Request, into any) error {
	if r.Body == nil {
		return nil
	}
	raw, err := io.ReadAll(io.LimitReader(r.Body, maxBodyBytes+1))
	if err != nil {
		return apierrors.NewBadRequest(fmt.Sprintf("reading the request body: %v", err))
	}
	if len(raw) > maxBodyBytes {
		return apierrors.NewRequestEntityTooLargeError(fmt.Sprintf("the options body is limited to %d bytes", maxBodyBytes))
	}
	if len(strings.TrimSpace(string(raw))) == 0 {
		return nil
	}
	if err := json.Unmarshal(raw, into); err != nil {
		return apierrors.NewBadRequest(fmt.Sprintf("the request body is not a valid %T: %v", into, err))
	}
	return nil
}

// DryRun reports whether the request is a dry run, from the dryRun query parameter and the
// body's dryRun list. As everywhere in Kubernetes, "All" is the only value.
func DryRun(r *http.Request, body []string) (bool, error) {
	values := append(append([]string{}, r.URL.Query()["dryRun"]...), body...)
	for _, v := range values {
		if v != metav1.DryRunAll {
			return false, apierrors.NewBadRequest(fmt.Sprintf("invalid dryRun value %q: only %q is supported", v, metav1.DryRunAll))
		}
	}
	return len(values) > 0, nil
}

// DryRunOption turns the dry-run flag into the storage option list.
func DryRunOption(dryRun bool) []string {
	if dryRun {
		return []string{metav1.DryRunAll}
	}
	return nil
}

// RequireMethod answers 405 unless r uses method.
func RequireMethod(w http.ResponseWriter, r *http.Request, method string) bool {
	if r.Method == method {
		return true
	}
	w.Header().Set("Allow", method)
	WriteError(w, apierrors.NewMethodNotSupported(schemaResource(r), r.Method))
	return false
}

// WriteAccepted answers 202 with no body, as KubeVirt does for the VM actions.
func WriteAccepted(w http.ResponseWriter) {
	w.WriteHeader(http.StatusAccepted)
}

// WriteOK answers 200 with no body, as KubeVirt does for the VMI actions.
func WriteOK(w http.ResponseWriter) {
	w.WriteHeader(http.StatusOK)
}

// WriteError answers with err as a metav1.Status. Errors that are not API status errors become
// 500s; callers convert expected failures to a fitting status first.
func WriteError(w http.ResponseWriter, err error) {
	var apiStatus apierrors.APIStatus
	if !errors.As(err, &apiStatus) {
		apiStatus = apierrors.NewInternalError(err)
	}
	status := apiStatus.Status()
	status.TypeMeta = metav1.TypeMeta{Kind: "Status", APIVersion: "v1"}
	if status.Code == 0 {
		status.Code = http.StatusInternalServerError
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(int(status.Code))
	_ = json.NewEncoder(w).Encode(&status)
}

// maxObjectBytes caps an object body (expand-vm-spec's VirtualMachine) at kube-apiserver's own
// limit for a request.
const maxObjectBytes = 3 * 1024 * 1024

// DecodeObject decodes the JSON object body of r into into, strictly: an unknown field is a 400
// naming it, as the API server answers for a create.
func DecodeObject(r *http.Request, into any) error {
	if r.Body == nil {
		return apierrors.NewBadRequest("a request body is required")
	}
	raw, err := io.ReadAll(io.LimitReader(r.Body, maxObjectBytes+1))
	if err != nil {
		return apierrors.NewBadRequest(fmt.Sprintf("reading the request body: %v", err))
	}
	if len(raw) > maxObjectBytes {
		return apierrors.NewRequestEntityTooLargeError(fmt.Sprintf("the body is limited to %d bytes", maxObjectBytes))
	}
	if len(strings.TrimSpace(string(raw))) == 0 {
		return apierrors.NewBadRequest(fmt.Sprintf("a request body is required: a %T", into))
	}
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(into); err != nil {
		return apierrors.NewBadRequest(fmt.Sprintf("the request body is not a valid %T: %v", into, err))
	}
	return nil
}

// WriteObject answers 200 with obj as JSON.
func WriteObject(w http.ResponseWriter, obj any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	_ = json.NewEncoder(w).Encode(obj)
}
