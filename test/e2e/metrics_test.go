/*
Copyright The NativeVirt Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package e2e

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net"
	"net/http"
	"regexp"
	"strconv"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/nativevirt/nativevirt/pkg/streams"
)

// metricsPort is the node agent's metrics port (nativevirt-handler --metrics-port).
const metricsPort = 8187

// metricsTokens creates two service accounts in the test's namespace and returns a token of
// each: one allowed to get /metrics (as Prometheus's RBAC allows it), one not.
func (f *flow) metricsTokens() (allowed, denied string) {
	f.t.Helper()
	ctx := context.Background()
	role := "e2e-metrics-reader-" + f.ns
	if _, err := f.kube.RbacV1().ClusterRoles().Create(ctx, &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: role},
		Rules:      []rbacv1.PolicyRule{{NonResourceURLs: []string{"/metrics"}, Verbs: []string{"get"}}},
	}, metav1.CreateOptions{}); err != nil {
		f.t.Fatal(err)
	}
	f.t.Cleanup(func() { _ = f.kube.RbacV1().ClusterRoles().Delete(context.Background(), role, metav1.DeleteOptions{}) })
	if _, err := f.kube.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: role},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: "scraper", Namespace: f.ns}},
	}, metav1.CreateOptions{}); err != nil {
		f.t.Fatal(err)
	}
	f.t.Cleanup(func() {
		_ = f.kube.RbacV1().ClusterRoleBindings().Delete(context.Background(), role, metav1.DeleteOptions{})
	})
	token := func(name string) string {
		if _, err := f.kube.CoreV1().ServiceAccounts(f.ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
			f.t.Fatal(err)
		}
		tr, err := f.kube.CoreV1().ServiceAccounts(f.ns).CreateToken(ctx, name, &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
		if err != nil {
			f.t.Fatal(err)
		}
		return tr.Status.Token
	}
	return token("scraper"), token("nosy")
}

// scrapeNode GETs https://<node agent>:8187/metrics with token (none when empty), verifying the
// agent's certificate with the node CA; it returns the status code and the body.
func (f *flow) scrapeNode(node, token string) (int, string) {
	f.t.Helper()
	ctx := context.Background()
	n, err := f.kube.CoreV1().Nodes().Get(ctx, node, metav1.GetOptions{})
	if err != nil {
		f.t.Fatal(err)
	}
	host, _, err := net.SplitHostPort(n.Annotations[streams.HandlerEndpointAnnotation])
	if err != nil {
		f.t.Fatalf("node %s: the node agent's endpoint annotation: %v", node, err)
	}
	certs, err := f.kube.CoreV1().Secrets("nativevirt").Get(ctx, "nativevirt-handler-certs", metav1.GetOptions{})
	if err != nil {
		f.t.Fatal(err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(certs.Data["ca.crt"]) {
		f.t.Fatal("no node CA in nativevirt-handler-certs")
	}
	return f.scrape("https://"+net.JoinHostPort(host, strconv.Itoa(metricsPort))+"/metrics", token, &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12})
}

// scrapeControllers sums what every nativevirt-controller replica reports (only the leader has
// samples) at its metrics port; their certificates are self-signed, so they are not verified.
func (f *flow) scrapeControllers(token string) string {
	f.t.Helper()
	pods, err := f.kube.CoreV1().Pods("nativevirt").List(context.Background(), metav1.ListOptions{LabelSelector: "app.kubernetes.io/name=nativevirt-controller"})
	if err != nil {
		f.t.Fatal(err)
	}
	var all string
	for _, p := range pods.Items {
		if p.Status.PodIP == "" || p.DeletionTimestamp != nil {
			continue
		}
		code, body := f.scrape("https://"+net.JoinHostPort(p.Status.PodIP, "8443")+"/metrics", token,
			&tls.Config{InsecureSkipVerify: true, MinVersion: tls.VersionTLS12}) //nolint:gosec // self-signed, see above
		if code != http.StatusOK {
			f.t.Errorf("controller %s metrics: %d %s", p.Name, code, body)
		}
		all += body
	}
	return all
}

// scrape GETs url with token (none when empty) and returns the status code and the body.
func (f *flow) scrape(url, token string, tlsConfig *tls.Config) (int, string) {
	f.t.Helper()
	client := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{TLSClientConfig: tlsConfig}}
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		f.t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := client.Do(req)
	if err != nil {
		f.t.Fatalf("scraping %s: %v", url, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

// metricValue finds the sample of metric with the given labels (in Prometheus' order: sorted)
// in a scrape.
func metricValue(body, metric, labels string) (float64, error) {
	m := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(metric+"{"+labels+"}") + ` (\S+)$`).FindStringSubmatch(body)
	if m == nil {
		return 0, fmt.Errorf("no sample %s{%s}", metric, labels)
	}
	return strconv.ParseFloat(m[1], 64)
}
