package metricsserver

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"k8s.io/apiserver/pkg/authentication/authenticator"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"

	"k8s.io/component-base/metrics"
)

// tokens authenticates "Bearer prometheus" and "Bearer someone".
var tokens = authenticator.RequestFunc(func(r *http.Request) (*authenticator.Response, bool, error) {
	name, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok || (name != "prometheus" && name != "someone") {
		return nil, false, nil
	}
	return &authenticator.Response{User: &user.DefaultInfo{Name: name}}, true, nil
})

// onlyPrometheus allows prometheus to get /metrics, and nothing else.
var onlyPrometheus = authorizer.AuthorizerFunc(func(_ context.Context, a authorizer.Attributes) (authorizer.Decision, string, error) {
	if a.GetUser().GetName() == "prometheus" && a.GetVerb() == "get" && a.GetPath() == "/metrics" && !a.IsResourceRequest() {
		return authorizer.DecisionAllow, "", nil
	}
	return authorizer.DecisionNoOpinion, "no rule", nil
})

func scrape(t *testing.T, h http.Handler, path, token string) (int, string) {
	t.Helper()
	req := httptest.NewRequest(http.MethodGet, path, nil)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	body, _ := io.ReadAll(rec.Result().Body)
	return rec.Code, string(body)
}

// emptyCollector has nothing to report.
type emptyCollector struct{ metrics.BaseStableCollector }

func (*emptyCollector) DescribeWithStability(chan<- *metrics.Desc) {}
func (*emptyCollector) CollectWithStability(chan<- metrics.Metric) {}

// TestMetricsNeedAuthorization: no token is 401, a token without the right to get /metrics
// 403, another path 404.
func TestMetricsNeedAuthorization(t *testing.T) {
	h := Handler(tokens, onlyPrometheus, &emptyCollector{})
	for _, tc := range []struct {
		path, token string
		want        int
	}{
		{"/metrics", "", http.StatusUnauthorized},
		{"/metrics", "forged", http.StatusUnauthorized},
		{"/metrics", "someone", http.StatusForbidden},
		{"/metrics", "prometheus", http.StatusOK},
		{"/other", "prometheus", http.StatusNotFound},
	} {
		if code, body := scrape(t, h, tc.path, tc.token); code != tc.want {
			t.Errorf("GET %s as %q: %d %s, want %d", tc.path, tc.token, code, body, tc.want)
		}
	}
}
