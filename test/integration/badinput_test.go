package integration

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math/rand"
	"net/http"
	"sort"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
	"github.com/nativevirt/nativevirt/test/integration/framework"
)

type response struct {
	code int
	body string
}

func do(t *testing.T, client *http.Client, method, url, contentType string, body []byte) response {
	t.Helper()
	req, err := http.NewRequest(method, url, bytes.NewReader(body))
	if err != nil {
		t.Fatalf("request: %v", err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return response{resp.StatusCode, string(b)}
}

const vmsPath = "/apis/kubevirt.io/v1/namespaces/default/virtualmachines"

// TestBadInput: oversized, unknown, unsupported and malformed input gets a clear 4xx.
func TestBadInput(t *testing.T) {
	srv := framework.Start(t, "")
	client := srv.HTTPClient(t)
	base := srv.Config.Host + vmsPath
	vmJSON := func(name string) map[string]interface{} {
		var obj map[string]interface{}
		if err := yaml.Unmarshal([]byte(framework.VMYAML(name)), &obj); err != nil {
			t.Fatal(err)
		}
		return obj
	}
	marshal := func(v interface{}) []byte { b, _ := json.Marshal(v); return b }

	t.Run("3MiB body is refused with 413", func(t *testing.T) {
		obj := vmJSON("big")
		obj["metadata"].(map[string]interface{})["annotations"] = map[string]interface{}{"big": strings.Repeat("x", 3*1024*1024)}
		r := do(t, client, http.MethodPost, base, "application/json", marshal(obj))
		if r.code != http.StatusRequestEntityTooLarge {
			t.Fatalf("got %d %s, want 413", r.code, truncate(r.body))
		}
	})

	t.Run("unknown field is refused under strict field validation, naming it", func(t *testing.T) {
		obj := vmJSON("strict")
		obj["spec"].(map[string]interface{})["template"].(map[string]interface{})["spec"].(map[string]interface{})["notAField"] = true
		r := do(t, client, http.MethodPost, base+"?fieldValidation=Strict", "application/json", marshal(obj))
		if r.code != http.StatusBadRequest || !strings.Contains(r.body, "notAField") {
			t.Fatalf("got %d %s, want 400 naming notAField", r.code, truncate(r.body))
		}
	})

	t.Run("unsupported feature is refused with 422 naming the field", func(t *testing.T) {
		obj := vmJSON("gpu")
		devices := obj["spec"].(map[string]interface{})["template"].(map[string]interface{})["spec"].(map[string]interface{})["domain"].(map[string]interface{})["devices"].(map[string]interface{})
		devices["gpus"] = []interface{}{map[string]interface{}{"name": "gpu1", "deviceName": "nvidia.com/TU104GL_Tesla_T4"}}
		r := do(t, client, http.MethodPost, base, "application/json", marshal(obj))
		if r.code != http.StatusUnprocessableEntity || !strings.Contains(r.body, "spec.template.spec.domain.devices.gpus") {
			t.Fatalf("got %d %s, want 422 naming spec.template.spec.domain.devices.gpus", r.code, truncate(r.body))
		}
	})

	t.Run("a probe the guest cannot answer is refused with 422 naming its port", func(t *testing.T) {
		obj := vmJSON("probe")
		tmpl := obj["spec"].(map[string]interface{})["template"].(map[string]interface{})["spec"].(map[string]interface{})
		tmpl["readinessProbe"] = map[string]interface{}{"httpGet": map[string]interface{}{"port": "metrics", "path": "/healthz"}}
		r := do(t, client, http.MethodPost, base, "application/json", marshal(obj))
		if r.code != http.StatusUnprocessableEntity || !strings.Contains(r.body, "spec.template.spec.readinessProbe.httpGet.port") {
			t.Fatalf("got %d %s, want 422 naming spec.template.spec.readinessProbe.httpGet.port", r.code, truncate(r.body))
		}
		// A numbered port and a guest agent probe are fine, stored with KubeVirt's defaults.
		tmpl["readinessProbe"] = map[string]interface{}{"tcpSocket": map[string]interface{}{"port": 22}, "periodSeconds": 5}
		tmpl["livenessProbe"] = map[string]interface{}{"guestAgentPing": map[string]interface{}{}, "initialDelaySeconds": 120}
		r = do(t, client, http.MethodPost, base, "application/json", marshal(obj))
		var created kubevirtv1.VirtualMachine
		if r.code != http.StatusCreated || json.Unmarshal([]byte(r.body), &created) != nil {
			t.Fatalf("got %d %s, want 201", r.code, truncate(r.body))
		}
		got, _ := json.Marshal([]interface{}{created.Spec.Template.Spec.ReadinessProbe, created.Spec.Template.Spec.LivenessProbe})
		if want := `[{"tcpSocket":{"port":22},"timeoutSeconds":1,"periodSeconds":5,"successThreshold":1,"failureThreshold":3},` +
			`{"guestAgentPing":{},"initialDelaySeconds":120,"timeoutSeconds":1,"periodSeconds":10,"successThreshold":1,"failureThreshold":3}]`; string(got) != want {
			t.Fatalf("probes stored as %s, want %s", got, want)
		}
	})

	t.Run("config volumes are accepted, a disk label an ISO cannot carry is refused with 422", func(t *testing.T) {
		obj := vmJSON("config")
		tmpl := obj["spec"].(map[string]interface{})["template"].(map[string]interface{})["spec"].(map[string]interface{})
		volumes := tmpl["volumes"].([]interface{})
		tmpl["volumes"] = append(volumes,
			map[string]interface{}{"name": "app", "configMap": map[string]interface{}{"name": "app", "volumeLabel": strings.Repeat("L", 40)}},
			map[string]interface{}{"name": "sa", "serviceAccount": map[string]interface{}{"serviceAccountName": "default"}})
		r := do(t, client, http.MethodPost, base, "application/json", marshal(obj))
		if r.code != http.StatusUnprocessableEntity || !strings.Contains(r.body, "spec.template.spec.volumes[3].configMap.volumeLabel") {
			t.Fatalf("got %d %s, want 422 naming spec.template.spec.volumes[3].configMap.volumeLabel", r.code, truncate(r.body))
		}
		tmpl["volumes"].([]interface{})[3].(map[string]interface{})["configMap"].(map[string]interface{})["volumeLabel"] = "cfgdata"
		if r := do(t, client, http.MethodPost, base, "application/json", marshal(obj)); r.code != http.StatusCreated {
			t.Fatalf("got %d %s, want 201", r.code, truncate(r.body))
		}
	})

	t.Run("runStrategy and running together are refused", func(t *testing.T) {
		obj := vmJSON("both")
		obj["spec"].(map[string]interface{})["running"] = true
		r := do(t, client, http.MethodPost, base, "application/json", marshal(obj))
		if r.code != http.StatusUnprocessableEntity || !strings.Contains(r.body, "spec.running") {
			t.Fatalf("got %d %s, want 422 naming spec.running", r.code, truncate(r.body))
		}
	})

	t.Run("a bad quantity is refused with a 400 naming its field", func(t *testing.T) {
		obj := vmJSON("quantity")
		domain := obj["spec"].(map[string]interface{})["template"].(map[string]interface{})["spec"].(map[string]interface{})["domain"].(map[string]interface{})
		domain["resources"] = map[string]interface{}{"requests": map[string]interface{}{"memory": "notaquantity"}}
		for _, strict := range []string{"", "?fieldValidation=Strict"} {
			r := do(t, client, http.MethodPost, base+strict, "application/json", marshal(obj))
			if r.code != http.StatusBadRequest || !strings.Contains(r.body, "spec.template.spec.domain.resources.requests.memory") {
				t.Fatalf("%s: got %d %s, want 400 naming spec.template.spec.domain.resources.requests.memory", strict, r.code, truncate(r.body))
			}
		}
	})

	t.Run("patches of every type that do not fit the type get a 4xx naming the field", func(t *testing.T) {
		if r := do(t, client, http.MethodPost, base, "application/json", marshal(vmJSON("smp"))); r.code != http.StatusCreated {
			t.Fatalf("create: %d %s", r.code, truncate(r.body))
		}
		const smp, merge, jsonPatch, apply = "application/strategic-merge-patch+json", "application/merge-patch+json",
			"application/json-patch+json", "application/apply-patch+yaml"
		deep := strings.Repeat(`{"a":`, 5000) + "1" + strings.Repeat("}", 5000)
		// Each bad value, as a patch of each type: at path (a JSON pointer) the value.
		for _, c := range []struct {
			name, path, value, wantField string
			types                        []string
		}{
			{"a number in a list of objects", "/spec/template/spec/volumes", `[-1]`, "spec.template.spec.volumes[0]",
				[]string{smp, merge, jsonPatch, apply}},
			{"an object as a merge key", "/spec/template/spec/volumes", `[{"name":{"a":1}}]`, "spec.template.spec.volumes[0].name",
				[]string{smp, merge, jsonPatch, apply}},
			{"a list element without its merge key", "/spec/template/spec/volumes", `[{"emptyDisk":{"capacity":"1Gi"}}]`,
				"spec.template.spec.volumes[0].name", []string{smp, apply}},
			{"a bad quantity", "/spec/template/spec/domain/resources/requests/memory", `"notaquantity"`,
				"spec.template.spec.domain.resources.requests.memory", []string{smp, merge, jsonPatch, apply}},
			{"a string for a boolean", "/spec/running", `"yes"`, "spec.running", []string{smp, merge, jsonPatch, apply}},
			{"deep nesting", "/spec/template/spec/domain/x", deep, "spec.template.spec.domain", []string{smp, merge, jsonPatch, apply}},
			{"deep nesting in a map", "/metadata/annotations/a", deep, "metadata.annotations.a", []string{smp, merge, jsonPatch, apply}},
		} {
			for _, ct := range c.types {
				body, url := patchAt(c.path, c.value, ct), base+"/smp"
				if ct == apply {
					url += "?fieldManager=t"
				}
				r := do(t, client, http.MethodPatch, url, ct, body)
				// A 4xx naming the field; short: not the whole object echoed back.
				if r.code < 400 || r.code >= 500 || !strings.Contains(r.body, c.wantField) || len(r.body) > 2000 {
					t.Errorf("%s, %s: got %d %s, want a short 4xx naming %q", c.name, ct, r.code, truncate(r.body), c.wantField)
				}
			}
		}
		// JSON patch operations that do not apply to the stored object say which one and why.
		for _, c := range []struct{ patch, want string }{
			{`[{"op":"remove","path":"/spec/nothing/0"}]`, "json patch operation 0 (remove /spec/nothing/0) does not apply"},
			{`[{"op":"add","path":"/metadata/labels/x","value":"y"},{"op":"test","path":"/metadata/name","value":"other"}]`,
				"json patch operation 1 (test /metadata/name) does not apply"},
			{`[{"op":"move"}]`, "json patch operation 0 (move) does not apply"},
			{`[{"op":"copy","from":"/metadata/name","path":"/spec/running"}]`, "spec.running"},
		} {
			r := do(t, client, http.MethodPatch, base+"/smp", jsonPatch, []byte(c.patch))
			if r.code < 400 || r.code >= 500 || !strings.Contains(r.body, c.want) {
				t.Errorf("%s: got %d %s, want a 4xx saying %q", c.patch, r.code, truncate(r.body), c.want)
			}
		}
		// Well-formed patches still apply.
		r := do(t, client, http.MethodPatch, base+"/smp", smp,
			[]byte(`{"spec":{"template":{"spec":{"volumes":[{"name":"scratch","emptyDisk":{"capacity":"1Gi"}}]}}}}`))
		if r.code != http.StatusOK || !strings.Contains(r.body, `"scratch"`) {
			t.Fatalf("a valid patch: got %d %s", r.code, truncate(r.body))
		}
		for ct, body := range map[string]string{merge: `{"metadata":{"labels":{"merged":"yes"}}}`,
			jsonPatch: `[{"op":"add","path":"/metadata/labels/patched","value":"yes"},{"op":"test","path":"/metadata/name","value":"smp"}]`} {
			if r := do(t, client, http.MethodPatch, base+"/smp", ct, []byte(body)); r.code != http.StatusOK {
				t.Fatalf("a valid %s: got %d %s", ct, r.code, truncate(r.body))
			}
		}
	})

	t.Run("missing instance types and preferences are named as what they are", func(t *testing.T) {
		for _, c := range []struct{ field, ref, want string }{
			{"instancetype", `{"name":"clarge"}`, `virtualmachineclusterinstancetypes.instancetype.kubevirt.io \"clarge\" not found`},
			{"instancetype", `{"name":"nlarge","kind":"VirtualMachineInstancetype"}`, `virtualmachineinstancetypes.instancetype.kubevirt.io \"nlarge\" not found`},
			{"preference", `{"name":"cpref"}`, `virtualmachineclusterpreferences.instancetype.kubevirt.io \"cpref\" not found`},
			{"preference", `{"name":"npref","kind":"VirtualMachinePreference"}`, `virtualmachinepreferences.instancetype.kubevirt.io \"npref\" not found`},
		} {
			obj := vmJSON("ref-" + c.field)
			var ref map[string]interface{}
			_ = json.Unmarshal([]byte(c.ref), &ref)
			obj["spec"].(map[string]interface{})[c.field] = ref
			r := do(t, client, http.MethodPost, base, "application/json", marshal(obj))
			if r.code < 400 || r.code >= 500 || !strings.Contains(r.body, c.want) || !strings.Contains(r.body, "spec."+c.field) {
				t.Errorf("%s %s: got %d %s, want a 4xx naming spec.%s and saying %s", c.field, c.ref, r.code, truncate(r.body), c.field, c.want)
			}
		}
	})

	t.Run("protobuf-first Accept falls back to JSON", func(t *testing.T) {
		req, _ := http.NewRequest(http.MethodGet, base, nil)
		req.Header.Set("Accept", "application/vnd.kubernetes.protobuf, application/json")
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
			t.Fatalf("got %d %s, want 200 JSON", resp.StatusCode, resp.Header.Get("Content-Type"))
		}
	})

	t.Run("200 malformed bodies never get a 5xx", func(t *testing.T) {
		rng := rand.New(rand.NewSource(20261122))
		valid := marshal(vmJSON("fuzz"))
		codes := map[int]int{}
		var failures []string
		for i := 0; i < 200; i++ {
			method, path, ct, body := malformedRequest(rng, valid, i)
			r := do(t, client, method, srv.Config.Host+path, ct, body)
			codes[r.code]++
			if r.code >= 500 {
				failures = append(failures, fmt.Sprintf("%s %s (%s) %q -> %d %s", method, path, ct, truncate(string(body)), r.code, truncate(r.body)))
			}
		}
		var summary []string
		for c, n := range codes {
			summary = append(summary, fmt.Sprintf("%d×%d", c, n))
		}
		sort.Strings(summary)
		t.Logf("status codes: %s", strings.Join(summary, " "))
		if len(failures) > 0 {
			t.Fatalf("%d responses >= 500:\n%s", len(failures), strings.Join(failures, "\n"))
		}
		if codes[http.StatusBadRequest]+codes[http.StatusUnprocessableEntity] < 100 {
			t.Fatalf("expected most malformed bodies to be refused with 400/422, got %v", codes)
		}
	})
}

// patchAt is a patch of content type ct that sets the value at pointer (a JSON pointer whose
// parents exist in a VM).
func patchAt(pointer, value, ct string) []byte {
	if ct == "application/json-patch+json" {
		return []byte(`[{"op":"add","path":"` + pointer + `","value":` + value + `}]`)
	}
	keys := strings.Split(pointer[1:], "/")
	doc := value
	for i := len(keys) - 1; i >= 0; i-- {
		doc = `{"` + keys[i] + `":` + doc + `}`
	}
	if ct == "application/apply-patch+yaml" {
		doc = `{"apiVersion":"kubevirt.io/v1","kind":"VirtualMachine","metadata":{"name":"smp"},` + doc[1:]
	}
	return []byte(doc)
}

// malformedRequest builds the i-th malformed request: corrupted JSON and YAML, wrong types at
// random places, bad quantities, nulls, deep nesting, for create, update and every patch type.
func malformedRequest(rng *rand.Rand, valid []byte, i int) (method, path, contentType string, body []byte) {
	paths := []string{vmsPath, "/apis/kubevirt.io/v1/namespaces/default/virtualmachineinstances",
		"/apis/kubevirt.io/v1alpha3/namespaces/default/virtualmachineinstancereplicasets",
		"/apis/kubevirt.io/v1/namespaces/default/virtualmachineinstancemigrations"}
	method, path, contentType = http.MethodPost, paths[rng.Intn(len(paths))], "application/json"
	switch i % 8 {
	case 0: // truncated JSON
		body = valid[:rng.Intn(len(valid))]
	case 1: // random bytes
		body = make([]byte, rng.Intn(512))
		rng.Read(body)
	case 2: // a valid document with one value replaced by a value of another type
		var obj interface{}
		_ = json.Unmarshal(valid, &obj)
		obj = mutate(rng, obj, 0)
		body, _ = json.Marshal(obj)
	case 3: // bad quantities and enum values
		s := string(valid)
		s = strings.Replace(s, `"256Mi"`, []string{`"-1Gi"`, `"lots"`, `"1e400"`, `""`, `"0"`}[rng.Intn(5)], 1)
		s = strings.Replace(s, `"virtio"`, []string{`"floppy"`, `""`, `"VIRTIO"`}[rng.Intn(3)], 1)
		body = []byte(s)
	case 4: // deep nesting
		depth := 100 + rng.Intn(2000)
		body = []byte(strings.Repeat(`{"a":`, depth) + "1" + strings.Repeat("}", depth))
	case 5: // YAML garbage
		contentType = "application/yaml"
		body = []byte([]string{"a: [b", "kind: VirtualMachine\nspec: 3", "- - -", ":\n  :", "apiVersion: kubevirt.io/v1\nkind: VirtualMachine\nmetadata: {name: [x]}"}[rng.Intn(5)])
	case 6: // patches against an existing or missing object
		method = http.MethodPatch
		path = vmsPath + "/" + []string{"fuzz", "missing"}[rng.Intn(2)]
		contentType = []string{"application/json-patch+json", "application/merge-patch+json", "application/strategic-merge-patch+json", "application/apply-patch+yaml"}[rng.Intn(4)]
		body = []byte([]string{`[{"op":"replace","path":"/spec/template/spec/domain","value":7}]`, `{"spec":{"template":null}}`,
			`{"spec":{"template":{"spec":{"volumes":[{"name":1}]}}}}`, `[{"op":"move"}]`, `{{`, `{"spec":{"runStrategy":{"x":1}}}`,
			`{"spec":{"template":{"spec":{"domain":{"devices":{"disks":[{"$patch":"delete"}]}}}}}}`}[rng.Intn(7)])
	case 7: // nulls and empty objects at the top
		body = []byte([]string{`null`, `{}`, `[]`, `{"apiVersion":"kubevirt.io/v1","kind":"VirtualMachine","metadata":null,"spec":null}`,
			`{"apiVersion":"kubevirt.io/v1","kind":"VirtualMachineInstance","metadata":{"name":"x"},"spec":{"domain":null}}`,
			`{"apiVersion":"kubevirt.io/v1","kind":"VirtualMachine","metadata":{"name":"x"},"spec":{"template":{"spec":{"domain":{"devices":{"disks":[null]}}}}}}`}[rng.Intn(6)])
	}
	return method, path, contentType, body
}

// mutate replaces one randomly chosen leaf or subtree with a value of a different type.
func mutate(rng *rand.Rand, v interface{}, depth int) interface{} {
	replacements := []interface{}{nil, "string", 42.5, -1, true, []interface{}{1, "x"}, map[string]interface{}{"x": nil}, 1e300}
	switch x := v.(type) {
	case map[string]interface{}:
		if len(x) == 0 || rng.Intn(6) == 0 && depth > 0 {
			return replacements[rng.Intn(len(replacements))]
		}
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		k := keys[rng.Intn(len(keys))]
		if depth == 0 && (k == "apiVersion" || k == "kind") {
			k = "spec"
		}
		x[k] = mutate(rng, x[k], depth+1)
		return x
	case []interface{}:
		if len(x) == 0 || rng.Intn(4) == 0 {
			return replacements[rng.Intn(len(replacements))]
		}
		i := rng.Intn(len(x))
		x[i] = mutate(rng, x[i], depth+1)
		return x
	default:
		return replacements[rng.Intn(len(replacements))]
	}
}

func truncate(s string) string {
	if len(s) > 300 {
		return s[:300] + "…"
	}
	return s
}
