// Package metricstest serves collectors the way metricsserver does, to any caller, for tests of
// collectors.
package metricstest

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"k8s.io/apiserver/pkg/authentication/authenticator"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/component-base/metrics"

	"github.com/nativevirt/nativevirt/pkg/metricsserver"
)

// Handler is metricsserver.Handler open to everyone. Build it once per collector: a collector
// registers once.
func Handler(collectors ...metrics.StableCollector) http.Handler {
	anyone := authenticator.RequestFunc(func(*http.Request) (*authenticator.Response, bool, error) {
		return &authenticator.Response{User: &user.DefaultInfo{Name: "prometheus"}}, true, nil
	})
	allow := authorizer.AuthorizerFunc(func(context.Context, authorizer.Attributes) (authorizer.Decision, string, error) {
		return authorizer.DecisionAllow, "", nil
	})
	return metricsserver.Handler(anyone, allow, collectors...)
}

// Scrape GETs the metrics from h and fails the test unless they come.
func Scrape(t *testing.T, h http.Handler) string {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, metricsserver.Path, nil))
	body, _ := io.ReadAll(rec.Result().Body)
	if rec.Code != http.StatusOK {
		t.Fatalf("scrape: %d %s", rec.Code, body)
	}
	return string(body)
}
