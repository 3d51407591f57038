package integration

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"hash/crc32"
	"io"
	"math/rand"
	"net/http"
	"os"
	"regexp"
	"runtime/debug"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/yaml"

	"github.com/nativevirt/nativevirt/test/integration/framework"
)

// hostileKind is one served kind: where it lives and a valid manifest of it.
type hostileKind struct {
	name, collection string
	manifest         func(name string) string
}

func hostileKinds() []hostileKind {
	const kv, it = "/apis/kubevirt.io/v1/namespaces/default/", "/apis/instancetype.kubevirt.io/v1beta1/"
	const cdi = "/apis/cdi.kubevirt.io/v1beta1/"
	instancetype := func(kind string) func(string) string {
		return func(name string) string {
			return fmt.Sprintf(`{"apiVersion":"instancetype.kubevirt.io/v1beta1","kind":%q,"metadata":{"name":%q,"labels":{"a":"b"}},
				"spec":{"cpu":{"guest":2},"memory":{"guest":"256Mi"}}}`, kind, name)
		}
	}
	preference := func(kind string) func(string) string {
		return func(name string) string {
			return fmt.Sprintf(`{"apiVersion":"instancetype.kubevirt.io/v1beta1","kind":%q,"metadata":{"name":%q},
				"spec":{"cpu":{"preferredCPUTopology":"cores"},"devices":{"preferredDiskBus":"virtio"}}}`, kind, name)
		}
	}
	return []hostileKind{
		{"VirtualMachine", kv + "virtualmachines", framework.VMYAML},
		{"VirtualMachineInstance", kv + "virtualmachineinstances", framework.VMIYAML},
		{"VirtualMachineInstanceReplicaSet", kv + "virtualmachineinstancereplicasets", func(n string) string { return framework.VMIRSYAML(n, 0) }},
		{"VirtualMachineInstanceMigration", kv + "virtualmachineinstancemigrations", func(n string) string { return framework.VMIMYAML(n, "target") }},
		{"VirtualMachineInstancetype", it + "namespaces/default/virtualmachineinstancetypes", instancetype("VirtualMachineInstancetype")},
		{"VirtualMachineClusterInstancetype", it + "virtualmachineclusterinstancetypes", instancetype("VirtualMachineClusterInstancetype")},
		{"VirtualMachinePreference", it + "namespaces/default/virtualmachinepreferences", preference("VirtualMachinePreference")},
		{"VirtualMachineClusterPreference", it + "virtualmachineclusterpreferences", preference("VirtualMachineClusterPreference")},
		// CDI's kinds (CDIConfig is left out: its one object must be named config).
		{"DataVolume", cdi + "namespaces/default/datavolumes", func(name string) string {
			return fmt.Sprintf(`{"apiVersion":"cdi.kubevirt.io/v1beta1","kind":"DataVolume","metadata":{"name":%q,"labels":{"a":"b"}},
				"spec":{"source":{"http":{"url":"https://example.com/d.qcow2","extraHeaders":["A: b"]}},
				"storage":{"accessModes":["ReadWriteOnce"],"resources":{"requests":{"storage":"1Gi"}}}}}`, name)
		}},
		{"DataSource", cdi + "namespaces/default/datasources", func(name string) string {
			return fmt.Sprintf(`{"apiVersion":"cdi.kubevirt.io/v1beta1","kind":"DataSource","metadata":{"name":%q},
				"spec":{"source":{"pvc":{"namespace":"golden","name":"fedora"}}}}`, name)
		}},
		{"StorageProfile", cdi + "storageprofiles", func(name string) string {
			return fmt.Sprintf(`{"apiVersion":"cdi.kubevirt.io/v1beta1","kind":"StorageProfile","metadata":{"name":%q},
				"spec":{"cloneStrategy":"copy","claimPropertySets":[{"accessModes":["ReadWriteOnce"],"volumeMode":"Filesystem"}]}}`, name)
		}},
	}
}

// hostileCount is how many hostile requests each kind gets: NV_HOSTILE_N, 1,000 by default
// (make test), 10,000 in the full run the reliability issue asks for.
func hostileCount(t *testing.T) int {
	return int(positiveEnv(t, "NV_HOSTILE_N", 1000))
}

// hostileSeed seeds the generator: NV_HOSTILE_SEED, 20261128 by default. A failure reproduces
// with the seed the test prints.
func hostileSeed(t *testing.T) int64 {
	return positiveEnv(t, "NV_HOSTILE_SEED", 20261128)
}

func positiveEnv(t *testing.T, name string, def int64) int64 {
	s := os.Getenv(name)
	if s == "" {
		return def
	}
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil || v <= 0 {
		t.Fatalf("%s=%q: want a positive number", name, s)
	}
	return v
}

// countPanics counts the panics the server recovers (k8s.io/apiserver's panic filter reports
// each to utilruntime's handlers) until the test ends, when a panic fails it: a recovered panic
// can still end in an answer that looks fine (a 4xx written before it) or a reset stream.
func countPanics(t *testing.T) {
	var mu sync.Mutex
	var panics []string
	saved := utilruntime.PanicHandlers
	utilruntime.PanicHandlers = append(append([]func(context.Context, any){}, saved...), func(_ context.Context, r any) {
		if r == http.ErrAbortHandler {
			// Not a crash: the timeout filter abandons a request whose client left (an HTTP/2
			// client resets the stream of a body the server answered early, a 413) this way.
			// A request that did not get its answer shows as a transport error.
			return
		}
		mu.Lock()
		defer mu.Unlock()
		if len(panics) < 3 {
			panics = append(panics, fmt.Sprintf("%v\n%s", r, debug.Stack()))
		} else {
			panics = append(panics, "")
		}
	})
	t.Cleanup(func() {
		utilruntime.PanicHandlers = saved
		mu.Lock()
		defer mu.Unlock()
		if len(panics) > 0 {
			t.Errorf("the server recovered %d panics; the first:\n%s", len(panics), strings.Join(panics[:min(len(panics), 3)], "\n"))
		}
	})
}

// TestHostileBodies sends generated malformed and hostile requests of every kind through the real
// server: no response is a 5xx or a broken connection, and every 4xx says what was wrong: a
// field, the decoding error, or the limit exceeded.
func TestHostileBodies(t *testing.T) {
	countPanics(t)
	srv := framework.Start(t, "")
	client := srv.HTTPClient(t)
	n, seed := hostileCount(t), hostileSeed(t)
	t.Logf("%d requests per kind, NV_HOSTILE_SEED=%d", n, seed)
	// The migrations' instance.
	if r := send(client, http.MethodPost, srv.Config.Host+"/apis/kubevirt.io/v1/namespaces/default/virtualmachineinstances",
		"application/json", toJSON(t, framework.VMIYAML("target"))); r.code != http.StatusCreated {
		t.Fatalf("creating the migrations' instance: %d %s", r.code, truncate(r.body))
	}
	for _, k := range hostileKinds() {
		t.Run(k.name, func(t *testing.T) {
			valid := toJSON(t, k.manifest("hostile"))
			if r := send(client, http.MethodPost, srv.Config.Host+k.collection, "application/json", valid); r.code != http.StatusCreated {
				t.Fatalf("creating the valid object: %d %s", r.code, truncate(r.body))
			}
			rng := rand.New(rand.NewSource(seed ^ int64(crc32.ChecksumIEEE([]byte(k.name)))))
			reqs := make([]hostileRequest, n)
			for i := range reqs {
				reqs[i] = hostileFor(rng, k, valid, i)
				reqs[i].url = srv.Config.Host + reqs[i].url
			}
			checkResponses(t, client, reqs)
		})
	}
}

// TestHostileSubresources sends bad bodies, bad upgrades and absurd ports to the subresources.
func TestHostileSubresources(t *testing.T) {
	countPanics(t)
	srv := framework.Start(t, "")
	client := srv.HTTPClient(t)
	const sub = "/apis/subresources.kubevirt.io/v1/namespaces/default/"
	for _, m := range []string{framework.VMYAML("hostile"), framework.VMIYAML("hostile")} {
		var obj map[string]any
		_ = yaml.Unmarshal([]byte(m), &obj)
		path := "/apis/kubevirt.io/v1/namespaces/default/" + strings.ToLower(obj["kind"].(string)) + "s"
		if r := send(client, http.MethodPost, srv.Config.Host+path, "application/json", toJSON(t, m)); r.code != http.StatusCreated {
			t.Fatalf("create: %d %s", r.code, truncate(r.body))
		}
	}
	seed := hostileSeed(t)
	t.Logf("NV_HOSTILE_SEED=%d", seed)
	rng := rand.New(rand.NewSource(seed))
	bodies := []string{"", "{", "null", "[]", `{"gracePeriod":-5}`, `{"gracePeriod":"x"}`, `{"dryRun":"All"}`, `{"dryRun":[1]}`,
		`{"unfreezeTimeout":"forever"}`, `{"unfreezeTimeout":"-1s"}`, `{"paused":"yes"}`, `{"addedNodeSelector":{"a":1}}`,
		strings.Repeat("[", 10000), "\xff\xfe\x00", `{"name":"` + strings.Repeat("x", 100000) + `"}`}
	var reqs []hostileRequest
	for _, res := range []string{"virtualmachines", "virtualmachineinstances", "missing-resource"} {
		for _, name := range []string{"hostile", "missing", "..", "%00", strings.Repeat("n", 300)} {
			for _, action := range []string{"start", "stop", "restart", "migrate", "pause", "unpause", "softreboot", "freeze",
				"unfreeze", "guestosinfo", "userlist", "filesystemlist", "expand-spec", "nonsense"} {
				for _, method := range []string{http.MethodPut, http.MethodGet, http.MethodPost, http.MethodDelete} {
					reqs = append(reqs, hostileRequest{method: method, url: srv.Config.Host + sub + res + "/" + name + "/" + action,
						contentType: "application/json", body: []byte(bodies[rng.Intn(len(bodies))])})
				}
			}
		}
	}
	checkResponses(t, client, reqs)
	reqs = nil
	upgrades := []map[string]string{{}, {"Connection": "Upgrade"}, {"Connection": "Upgrade", "Upgrade": "websocket"},
		{"Connection": "Upgrade", "Upgrade": "websocket", "Sec-Websocket-Version": "13", "Sec-Websocket-Key": "not base64!"},
		{"Connection": "Upgrade", "Upgrade": "h2c"}, {"Connection": "Upgrade", "Upgrade": "websocket", "Sec-Websocket-Version": "99",
			"Sec-Websocket-Key": "dGhlIHNhbXBsZSBub25jZQ==", "Sec-Websocket-Protocol": "nonsense.kubevirt.io"}}
	for _, res := range []string{"virtualmachines", "virtualmachineinstances"} {
		for _, stream := range []string{"console", "vnc", "vnc/screenshot", "portforward/22", "portforward/0", "portforward/65536",
			"portforward/-1", "portforward/abc", "portforward/99999999999999999999", "portforward/22/sctp", "portforward/22/udp/x",
			"portforward/" + strings.Repeat("9", 5000)} {
			for _, name := range []string{"hostile", "missing"} {
				for _, h := range upgrades {
					reqs = append(reqs, hostileRequest{method: http.MethodGet, url: srv.Config.Host + sub + res + "/" + name + "/" + stream, header: h})
				}
			}
		}
	}
	checkResponses(t, http1Client(t, srv), reqs)
}

// http1Client is a client of srv that speaks HTTP/1.1 only, as websocket clients do: HTTP/2
// has no Upgrade.
func http1Client(t *testing.T, srv *framework.Server) *http.Client {
	cfg := rest.CopyConfig(srv.Config)
	cfg.TLSClientConfig.NextProtos = []string{"http/1.1"}
	c, err := rest.HTTPClientFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

type hostileRequest struct {
	method, url, contentType string
	header                   map[string]string
	body                     []byte
}

// saysWhat matches a 4xx's message that says what was wrong: a field of the object (metadata,
// spec, status and their paths, the type's own fields in a decoding error), the decoding error,
// or the limit, method, media type, object or state that refused it.
var saysWhat = regexp.MustCompile(`(?i)(\b(metadata|spec|status)(\.|\[|:)|\b(apiVersion|kind|name)\b|json|yaml|utf-8|invalid character|unexpected end|` +
	`cannot unmarshal|\bEOF\b|request body|unknown format|decod|unrecognized|cannot be handled as|too large|not found|already exists|not allowed|` +
	`not supported|unsupported|method|media type|upgrade|websocket|port|protocol|does not match|conflict|cannot be fulfilled|` +
	`needs a body|the document|patch|gracePeriod|dryRun|timeout|guest agent|not running|paused)`)

// genericRefusal is k8s.io/apiserver's message for a 422 that lost its reason: it says nothing.
const genericRefusal = "the server rejected our request due to an error in our request"

// messageOf is a Status answer's message, or the whole body of any other answer.
func messageOf(body string) string {
	var st metav1.Status
	if json.Unmarshal([]byte(body), &st) == nil && st.Kind == "Status" {
		return st.Message
	}
	return body
}

// checkResponses sends reqs from four workers and fails on a 5xx, a broken connection, or a 4xx
// that does not say what was wrong; it logs how many got each status.
func checkResponses(t *testing.T, client *http.Client, reqs []hostileRequest) {
	t.Helper()
	var mu sync.Mutex
	codes := map[int]int{}
	var failures []string
	work := make(chan hostileRequest)
	var wg sync.WaitGroup
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for q := range work {
				r := sendWith(client, q)
				var problem string
				switch {
				case r.err != nil:
					problem = "transport error " + r.err.Error()
				case r.code >= 500:
					problem = fmt.Sprintf("%d %s", r.code, truncate(r.body))
				case r.code >= 400 && (!saysWhat.MatchString(messageOf(r.body)) || strings.Contains(r.body, genericRefusal)):
					problem = fmt.Sprintf("%d without saying what was wrong: %s", r.code, truncate(r.body))
				}
				mu.Lock()
				codes[r.code]++
				if problem != "" && len(failures) < 20 {
					failures = append(failures, fmt.Sprintf("%s %s (%s) %q -> %s", q.method, truncate(q.url), q.contentType, truncate(string(q.body)), problem))
				}
				mu.Unlock()
			}
		}()
	}
	for _, q := range reqs {
		work <- q
	}
	close(work)
	wg.Wait()
	var summary []string
	for c, n := range codes {
		summary = append(summary, fmt.Sprintf("%d×%d", c, n))
	}
	sort.Strings(summary)
	t.Logf("%d requests; status codes: %s", len(reqs), strings.Join(summary, " "))
	if len(failures) > 0 {
		t.Fatalf("bad answers (first %d):\n%s", len(failures), strings.Join(failures, "\n"))
	}
}

type sent struct {
	code int
	body string
	err  error
}

func send(client *http.Client, method, url, contentType string, body []byte) sent {
	return sendWith(client, hostileRequest{method: method, url: url, contentType: contentType, body: body})
}

func sendWith(client *http.Client, q hostileRequest) sent {
	req, err := http.NewRequest(q.method, q.url, bytes.NewReader(q.body))
	if err != nil {
		return sent{code: 400, body: "the client refused the URL: " + err.Error()}
	}
	if q.contentType != "" {
		req.Header.Set("Content-Type", q.contentType)
	}
	for k, v := range q.header {
		req.Header.Set(k, v)
	}
	resp, err := client.Do(req)
	if err != nil {
		return sent{err: err}
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	return sent{code: resp.StatusCode, body: string(b)}
}

func toJSON(t *testing.T, manifest string) []byte {
	t.Helper()
	b, err := yaml.YAMLToJSON([]byte(manifest))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// hostileFor builds the i-th hostile request for kind k, valid being a valid object of it (stored
// as "hostile").
func hostileFor(rng *rand.Rand, k hostileKind, valid []byte, i int) hostileRequest {
	q := hostileRequest{method: http.MethodPost, url: k.collection, contentType: "application/json"}
	var doc map[string]any
	_ = json.Unmarshal(valid, &doc)
	switch i % 12 {
	case 0: // truncated
		q.body = valid[:rng.Intn(len(valid))]
	case 1: // random bytes, sometimes as YAML
		q.body = make([]byte, rng.Intn(1024))
		rng.Read(q.body)
		if rng.Intn(2) == 0 {
			q.contentType = "application/yaml"
		}
	case 2, 3: // a value of another type somewhere
		q.body, _ = json.Marshal(mutate(rng, doc, 0))
	case 4: // deep nesting, objects or arrays, at the top or inside
		depth := 50 + rng.Intn(20000)
		open, close := strings.Repeat(`{"a":`, depth), strings.Repeat("}", depth)
		if rng.Intn(2) == 0 {
			open, close = strings.Repeat("[", depth), strings.Repeat("]", depth)
		}
		q.body = []byte(open + "1" + close)
		if rng.Intn(2) == 0 {
			doc["spec"] = json.RawMessage(open + "1" + close)
			q.body, _ = json.Marshal(doc)
		}
	case 5: // huge strings: a name, a label, an annotation, a whole oversized body
		big := strings.Repeat("x", []int{300, 70000, 1 << 20, 4 << 20}[rng.Intn(4)])
		meta := doc["metadata"].(map[string]any)
		switch rng.Intn(3) {
		case 0:
			meta["name"] = big
		case 1:
			meta["labels"] = map[string]any{big: big}
		default:
			meta["annotations"] = map[string]any{"a": big}
		}
		q.body, _ = json.Marshal(doc)
	case 6: // invalid UTF-8 in names, keys and values
		s := string(valid)
		s = strings.Replace(s, `"hostile"`, "\"ho\xffst\xc0ile\"", 1)
		s = strings.Replace(s, `"spec"`, "\"sp\xfeec\"", rng.Intn(2))
		q.body = []byte(s)
	case 7: // wrong kinds and versions
		doc["kind"] = []any{"VirtualMachine", "Pod", "VirtualMachineInstanceMigration", "", 5, nil}[rng.Intn(6)]
		doc["apiVersion"] = []any{"kubevirt.io/v1alpha3", "kubevirt.io/v2", "v1", "instancetype.kubevirt.io/v1beta1", "", nil, []any{}}[rng.Intn(7)]
		q.body, _ = json.Marshal(doc)
	case 8, 9: // patches of every type against the stored object or a missing one
		q.method = http.MethodPatch
		q.url += "/" + []string{"hostile", "missing"}[rng.Intn(2)]
		q.contentType = []string{"application/json-patch+json", "application/merge-patch+json",
			"application/strategic-merge-patch+json", "application/apply-patch+yaml"}[rng.Intn(4)]
		q.body = hostilePatch(rng, q.contentType, doc)
		if q.contentType == "application/apply-patch+yaml" {
			q.url += "?fieldManager=hostile"
		}
	case 10: // updates that mutate the stored object, sometimes with a stale or bogus resourceVersion
		q.method = http.MethodPut
		q.url += "/hostile"
		doc["metadata"].(map[string]any)["resourceVersion"] = []any{"1", "x", "99999999999", nil}[rng.Intn(4)]
		q.body, _ = json.Marshal(mutate(rng, doc, 0))
	default: // bad quantities, numbers and enums
		s := string(valid)
		for _, q := range []string{`"256Mi"`, `"128Mi"`, `"1Gi"`, `"64Mi"`} {
			s = strings.Replace(s, q, []string{`"-1Gi"`, `"lots"`, `"1e400"`, `""`, `"1Ei"`, `9e999`, `-0`, `"0.0000001m"`}[rng.Intn(8)], 1)
		}
		s = strings.Replace(s, `"virtio"`, []string{`"floppy"`, `""`, `"VIRTIO"`, `null`, `7`}[rng.Intn(5)], 1)
		s = strings.Replace(s, `2`, []string{`-2`, `4294967296`, `1e10`, `"2"`, `2.5`}[rng.Intn(5)], 1)
		q.body = []byte(s)
	}
	return q
}

// hostilePatch is a patch body of content type ct that no server should answer with a 5xx.
func hostilePatch(rng *rand.Rand, ct string, doc map[string]any) []byte {
	switch ct {
	case "application/json-patch+json":
		ops := []string{`[{"op":"replace","path":"/spec","value":7}]`, `[{"op":"move"}]`, `[{"op":"add","path":"/metadata/labels/~2","value":1}]`,
			`[{"op":"remove","path":"/spec/nothing/0"}]`, `[{"op":"copy","from":"/spec","path":"/spec/x"}]`, `{}`, `[` + strings.Repeat(`{"op":"test","path":"/spec","value":1},`, 500) + `1]`,
			`[{"op":"add","path":"/spec/x","value":` + strings.Repeat("[", 5000) + strings.Repeat("]", 5000) + `}]`,
			`[{"op":"replace","path":"/metadata/name","value":"other"}]`}
		return []byte(ops[rng.Intn(len(ops))])
	case "application/apply-patch+yaml":
		b, _ := json.Marshal(mutate(rng, doc, 0))
		return b
	default:
		patches := []string{`{"spec":{"template":{"spec":{"volumes":[-1]}}}}`, `{"spec":{"template":{"spec":{"volumes":[{"name":{"a":1}}]}}}}`,
			`{"spec":{"template":{"spec":{"domain":{"devices":{"disks":[{"$patch":"delete"}]}}}}}}`, `{"spec":null}`, `{"metadata":{"labels":[1]}}`,
			`{"spec":{"template":{"spec":{"volumes":[null,{"name":5}]}}}}`, `{"$patch":"explode"}`, `{"metadata":{"$setElementOrder/finalizers":[{"a":1}]}}`,
			`{"spec":{"x":` + strings.Repeat(`{"a":`, 3000) + "1" + strings.Repeat("}", 3000) + `}}`, `[1,2]`, `"string"`}
		if rng.Intn(2) == 0 {
			b, _ := json.Marshal(mutate(rng, doc, 0))
			return b
		}
		return []byte(patches[rng.Intn(len(patches))])
	}
}
