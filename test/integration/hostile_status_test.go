package integration

import (
	"fmt"
	"math/rand"
	"net/http"
	"strings"
	"testing"

	"github.com/nativevirt/nativevirt/test/integration/framework"
)

// TestHostileStatusAndActions sends generated hostile bodies where a body is decoded by something
// other than a kind's main resource: the status subresource of every kind, a replica set's scale,
// expand-vm-spec (a VM in the body) and CDI's uploadtokenrequests (create only). Same checks as
// TestHostileBodies; NV_HOSTILE_N / 10 requests each (at least 100).
func TestHostileStatusAndActions(t *testing.T) {
	countPanics(t)
	srv := framework.Start(t, "")
	client := srv.HTTPClient(t)
	n, seed := max(hostileCount(t)/10, 100), hostileSeed(t)
	t.Logf("%d requests per target, NV_HOSTILE_SEED=%d", n, seed)
	if r := send(client, http.MethodPost, srv.Config.Host+"/apis/kubevirt.io/v1/namespaces/default/virtualmachineinstances",
		"application/json", toJSON(t, framework.VMIYAML("target"))); r.code != http.StatusCreated {
		t.Fatalf("creating the migrations' instance: %d %s", r.code, truncate(r.body))
	}
	type target struct {
		name string
		// kind generates the bodies; sub is where they go: "status" and "scale" of the stored
		// object, "" the URL as it is.
		kind hostileKind
		sub  string
		// url, when set, replaces the generated URL; method, when set, the generated method.
		url, method string
	}
	var targets []target
	for _, k := range hostileKinds() {
		if strings.Contains(k.collection, "instancetype.kubevirt.io") {
			continue // instance types and preferences have no status
		}
		targets = append(targets, target{name: k.name + "/status", kind: k, sub: "status"})
	}
	vmirs := hostileKinds()[2]
	targets = append(targets,
		target{name: "VirtualMachineInstanceReplicaSet/scale", sub: "scale", kind: hostileKind{"Scale", vmirs.collection, func(name string) string {
			return fmt.Sprintf(`{"apiVersion":"autoscaling/v1","kind":"Scale","metadata":{"name":%q,"namespace":"default"},"spec":{"replicas":2}}`, name)
		}}},
		target{name: "expand-vm-spec", kind: hostileKinds()[0], method: http.MethodPut,
			url: "/apis/subresources.kubevirt.io/v1/namespaces/default/expand-vm-spec"},
		target{name: "uploadtokenrequests", method: http.MethodPost,
			url: "/apis/upload.cdi.kubevirt.io/v1beta1/namespaces/default/uploadtokenrequests", kind: hostileKind{"UploadTokenRequest",
				"/apis/upload.cdi.kubevirt.io/v1beta1/namespaces/default/uploadtokenrequests", func(name string) string {
					return fmt.Sprintf(`{"apiVersion":"upload.cdi.kubevirt.io/v1beta1","kind":"UploadTokenRequest","metadata":{"name":%q},"spec":{"pvcName":"fedora"}}`, name)
				}}},
	)
	created := map[string]bool{}
	for _, tg := range targets {
		t.Run(tg.name, func(t *testing.T) {
			k := tg.kind
			if tg.sub != "" && !created[k.collection] {
				valid := toJSON(t, hostileKinds()[indexOfCollection(k.collection)].manifest("hostile"))
				if r := send(client, http.MethodPost, srv.Config.Host+k.collection, "application/json", valid); r.code != http.StatusCreated {
					t.Fatalf("creating the valid object: %d %s", r.code, truncate(r.body))
				}
				created[k.collection] = true
			}
			valid := toJSON(t, k.manifest("hostile"))
			rng := rand.New(rand.NewSource(seed ^ int64(len(tg.name))<<32))
			reqs := make([]hostileRequest, n)
			for i := range reqs {
				q := hostileFor(rng, k, valid, i)
				if tg.sub != "" {
					q = toSubresource(q, k.collection, tg.sub)
				}
				if tg.url != "" {
					q.url = tg.url
				}
				if tg.method != "" {
					q.method = tg.method
				}
				q.url = srv.Config.Host + q.url
				reqs[i] = q
			}
			checkResponses(t, client, reqs)
		})
	}
	// The scale subresource serves autoscaling/v1's Scale: its patches are checked against it.
	scale := srv.Config.Host + vmirs.collection + "/hostile/scale"
	for _, c := range []struct{ ct, body string }{
		{"application/apply-patch+yaml", `{"apiVersion":"autoscaling/v1","kind":"Scale","metadata":{"name":"hostile"},"spec":{"replicas":"two"}}`},
		{"application/strategic-merge-patch+json", `{"spec":{"replicas":{"a":1}}}`},
		{"application/merge-patch+json", `{"spec":{"replicas":"two"}}`},
		{"application/json-patch+json", `[{"op":"replace","path":"/spec/replicas","value":"two"}]`},
	} {
		url := scale
		if c.ct == "application/apply-patch+yaml" {
			url += "?fieldManager=t"
		}
		if r := send(client, http.MethodPatch, url, c.ct, []byte(c.body)); r.code != http.StatusBadRequest || !strings.Contains(r.body, "spec.replicas") {
			t.Errorf("scale, %s: got %d %s, want a 400 naming spec.replicas", c.ct, r.code, truncate(r.body))
		}
	}
}

// toSubresource sends q to subresource sub of the stored object ("hostile"), or of the one it
// names: a create becomes an update of the subresource, an update or patch keeps its method.
func toSubresource(q hostileRequest, collection, sub string) hostileRequest {
	path, query, _ := strings.Cut(q.url, "?")
	if path == collection {
		path += "/hostile"
		q.method = http.MethodPut
	}
	q.url = path + "/" + sub
	if query != "" {
		q.url += "?" + query
	}
	return q
}

func indexOfCollection(collection string) int {
	for i, k := range hostileKinds() {
		if k.collection == collection {
			return i
		}
	}
	return 0
}
